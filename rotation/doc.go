// Package rotation is the one model of a signing key's rotation: when a key
// (or a CA) is published, when it signs, when it is retired, and the rules
// that keep every token or certificate it signed verifiable meanwhile. It
// is pure: no clock (every function takes the time), no I/O, the standard
// library alone. The external signer's ring, the ksa command's scheduled
// issuer rotation and the pod-certificate CA rotation each follow it.
//
// # A rotation's life
//
// A [Schedule] is keys with times, under a [Policy]:
//
//  1. the next key is published: every copy of the key set (a store's
//     objects, a ClusterTrustBundle, kube-apiserver's discovery) gets it;
//     it signs nothing yet;
//  2. once it has been published for Policy.Propagation (every verifier
//     has fetched it), it signs: the key before it stops signing, at the
//     same instant, and stays published;
//  3. once Policy.RetireWait (MaxLifetime plus Skew) has passed since the
//     switch, every token the former key signed has expired: it is
//     retired.
//
// The schedule says it with three times per key, each optional:
//
//	switchAt := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
//	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 2 * time.Minute}
//	s, err := rotation.New(p, []rotation.Key{
//		{ID: "old", Signs: time.Unix(0, 0), Retired: switchAt.Add(p.RetireWait())}, // signs from the start
//		{ID: "new", Published: switchAt.Add(-time.Hour), Signs: switchAt},
//		{ID: "legacy", VerifyOnly: true, Unlisted: true}, // never signs, no copy holds it
//	})
//	st := s.At(now) // st.Keys with their roles, st.Signer, st.DataTimestamp, st.Next
//
// [Schedule.At] is what is published and who signs at an instant, the same
// on every replica given the same schedule: the keys published then (in
// the schedule's order) with their [Role] (staged, signing, previous,
// verify-only), the signer, the data timestamp (the latest publication or
// retirement so far, the Unix epoch before any) and the next change.
//
// # The rules
//
// [New] enforces every rule, each refusal a *[RuleError] naming the key,
// the time at fault and the earliest safe one, matching one sentinel per
// rule: at most [MaxKeys] keys ([ErrTooManyKeys]) with unique IDs
// ([ErrKeyID]); times from 1970 to the year 9999, in order ([ErrOrder]);
// verify-only keys never sign, and only they may be unlisted
// ([ErrVerifyOnly]); some key signs ([ErrNoSigner]), never two from the
// same instant ([ErrTwoSigners]); a key takes over at least Propagation
// after it is published ([ErrStaging]: the first key that signs, and a key
// published from the start, are exempt); a key is retired no sooner than
// RetireWait after the next took over ([ErrRetireEarly]), and the last
// key that signs never is ([ErrLastSigner]). So at every instant after
// its first switch a schedule has exactly one signer, published, and every
// key whose tokens may be live.
//
// A running signer changes its schedule only through
// [Schedule.CheckReplace]: it refuses a new schedule that withdraws a key
// whose tokens may be live, or makes a key sign less than Propagation after
// the signer first served it, whatever Published time the new schedule
// writes (the caller keeps when it first served each key).
//
// # Driving a rotation
//
// A rotation no one writes in advance moves one step per run (a CronJob, a
// controller's loop): [Schedule.Next] takes the IDs each published copy
// holds (copies), the time, and a [Cadence] (the rotation period, the
// delay every signer takes to read a changed schedule), and returns one
// [Action]:
//
//   - [Repair] first, when a copy lacks a key it must hold or holds one it
//     must not; a copy that lacks the next key before it signs restarts the
//     key's wait (Action.Restart: published again now, signing no sooner
//     than Propagation later);
//   - [PublishNext], when the signer has signed for Cadence.Every;
//   - [SignNext], when the next key has been published for the
//     propagation time: it signs Cadence.Delay later;
//   - [RetireOld], when every token of the old keys has expired;
//   - [Wait] otherwise, with until when and why ([Reason]).
//
// A switch or retirement the schedule writes itself is waited for, not
// made. The action carries the stage, the keys and the plan of the steps
// after it, each at its earliest time; [Schedule.Apply] turns it into the
// next schedule, and [Schedule.Postpone] moves a written switch later
// (never earlier), the former key's retirement with it.
//
//	a, err := sched.Next(copies, now, rotation.Cadence{Every: 90 * 24 * time.Hour, Delay: time.Minute})
//	if err == nil && a.Kind != rotation.Wait {
//		sched, err = sched.Apply(a, "sa-2") // the ID of the key made, for PublishNext
//	}
//
// The zero Cadence makes no key and no switch: it follows the schedule
// and repairs the copies.
//
// # The three users
//
// The external signer's ring (package extsigner) follows a schedule
// written in advance, a ring file: its keys map onto Key (Primary is
// Signs; a key without signer is VerifyOnly, Unlisted when excluded from
// discovery), its policy is Propagation = MinStaging, MaxLifetime =
// MaxTokenLifetime, Skew = MaxClockSkew + the validators' leeway + a
// second; FetchKeys answers At(now), and a reloaded ring file passes
// CheckReplace with the times the ring first served each key.
//
// The command's scheduled rotation (ksa issuer rotate --ring --to) calls
// Next once per run with the store's key-set copies and a Cadence of its
// flags (--every, --publish-delay, --propagation), and writes the action
// into the ring file.
//
// The pod-certificate CA rotation is a schedule of two CAs: the current
// one signing from the start and retired RetireWait after the switch, the
// next one published from the start and signing at the switch; the
// ClusterTrustBundle is its one copy, the cadence zero. A bundle found
// without the next CA before the switch is a Repair with Restart, whose
// SignsAt is the postponed switch; a switch recorded on the bundle is
// applied with Postpone, so it only ever moves later.
package rotation
