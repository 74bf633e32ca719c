package extsigner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/rotation"
)

// MaxRingFileBytes bounds a ring file: 1 MiB, far above the few kilobytes
// of MaxKeys keys. ParseRingFile refuses a longer one unread.
const MaxRingFileBytes = 1 << 20

// RingFile is a ring file: a ring's settings and its keys with their
// times, the form a signer reads its schedule from (see the package
// documentation for the format). Zero durations and times are absent from
// the file and mean their defaults.
type RingFile struct {
	// RefreshHint, MaxTokenLifetime and MinStaging are the ring's settings
	// (RingConfig's); zero means the default.
	RefreshHint, MaxTokenLifetime, MinStaging time.Duration
	// Keys are the ring's keys in the order FetchKeys lists them.
	Keys []RingFileKey
}

// RingFileKey is one entry of a ring file: a signing key, or the public
// keys of a PEM file published for verification only.
type RingFileKey struct {
	// Key is the reference of a signing key (a PEM file path, or a key
	// store's URI), opened with the Opener given to [RingFile.Open].
	Key string
	// PublicKeys, in place of Key, is the path of a PEM file whose public
	// keys are published for verification only (as kube-apiserver reads
	// --service-account-key-file: public keys, certificates and private
	// keys, every key in the file).
	PublicKeys string
	// KeyID is the published key ID; empty means Kubernetes' (jwks.KeyID).
	// For PublicKeys, only when the file holds one key.
	KeyID string
	// PublishInDiscovery, for PublicKeys, lists the keys in kube-apiserver's
	// discovery key set too: relying parties outside the cluster can then
	// verify the tokens they verify. Without it they are excluded from
	// discovery and serve kube-apiserver alone (TokenReview, the API).
	PublishInDiscovery bool
	// Published, Primary and Retired are the key's times (ScheduledKey's).
	// A signing key with a Primary time but no Published time is published
	// at its Primary time.
	Published, Primary, Retired time.Time
}

// The member names of a ring file.
const (
	fileRefreshHint      = "refreshHint"
	fileMaxTokenLifetime = "maxTokenLifetime"
	fileMinStaging       = "minStaging"
	fileKeys             = "keys"
	fileKey              = "key"
	filePublicKeys       = "publicKeys"
	fileKeyID            = "kid"
	fileInDiscovery      = "publishInDiscovery"
	filePublished        = "published"
	filePrimary          = "primary"
	fileRetired          = "retired"
)

// fileError reports a ring file refused at path ("keys[2].primary"),
// matching ErrInvalidRingFile.
func fileError(path, reason string, cause error) error {
	msg := "ring file"
	if path != "" {
		msg += " " + path
	}
	if reason != "" {
		msg += ": " + reason
	}
	return errs.Wrap(prefix, ErrInvalidRingFile, msg, cause)
}

// ParseRingFile reads a ring file: one strict JSON object (no member twice,
// no unknown member, valid UTF-8, nothing after it) of at most
// MaxRingFileBytes, whose settings and times obey [RingFile.Check]. Errors
// match [ErrInvalidRingFile] and name the member at fault.
func ParseRingFile(data []byte) (*RingFile, error) {
	if len(data) > MaxRingFileBytes {
		return nil, fileError("", fmt.Sprintf("%d bytes, more than %d", len(data), MaxRingFileBytes), nil)
	}
	r := jsonx.NewReader(data, 0)
	obj, err := r.Object()
	if err != nil {
		return nil, fileError("", "not a JSON object", err)
	}
	f := &RingFile{}
	var seen jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return nil, fileError("", "not strict JSON", err)
		}
		if !ok {
			break
		}
		member := string(name)
		if !seen.Add(name) {
			return nil, fileError(member, "appears twice", nil)
		}
		switch member {
		case fileRefreshHint:
			f.RefreshHint, err = readDuration(&r)
		case fileMaxTokenLifetime:
			f.MaxTokenLifetime, err = readDuration(&r)
		case fileMinStaging:
			f.MinStaging, err = readDuration(&r)
		case fileKeys:
			f.Keys, err = readFileKeys(&r)
		default:
			return nil, fileError(member, "is not a member of a ring file ("+fileRefreshHint+", "+fileMaxTokenLifetime+", "+fileMinStaging+", "+fileKeys+")", nil)
		}
		if err != nil {
			var fe *memberError
			if errors.As(err, &fe) {
				return nil, fileError(member+fe.path, fe.reason, fe.cause)
			}
			return nil, fileError(member, "", err)
		}
	}
	if err := r.End(); err != nil {
		return nil, fileError("", "not strict JSON", err)
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return f, nil
}

// memberError is a value refused inside a member, at path below it.
type memberError struct {
	path, reason string
	cause        error
}

func (e *memberError) Error() string { return e.path + ": " + e.reason }

func readDuration(r *jsonx.Reader) (time.Duration, error) {
	s, err := r.String()
	if err != nil {
		return 0, &memberError{reason: "is not a string such as \"24h\"", cause: err}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, &memberError{reason: fmt.Sprintf("%q is not a positive duration such as \"24h\" or \"90s\"", s)}
	}
	return d, nil
}

func readTime(r *jsonx.Reader) (time.Time, error) {
	s, err := r.String()
	if err != nil {
		return time.Time{}, &memberError{reason: "is not a string such as \"2027-03-01T09:00:00Z\"", cause: err}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &memberError{reason: fmt.Sprintf("%q is not an RFC 3339 time such as \"2027-03-01T09:00:00Z\"", s)}
	}
	if t.Before(time.Unix(0, 0)) {
		return time.Time{}, &memberError{reason: fmt.Sprintf("%q is before 1970", s)}
	}
	return t.UTC(), nil
}

// readText reads a string meant for messages and logs: UTF-8 without
// control characters, not empty.
func readText(r *jsonx.Reader) (string, error) {
	s, err := r.String()
	if err != nil {
		return "", &memberError{reason: "is not a string", cause: err}
	}
	if s == "" {
		return "", &memberError{reason: "is empty"}
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return "", &memberError{reason: "holds a control character"}
		}
	}
	return s, nil
}

func readFileKeys(r *jsonx.Reader) ([]RingFileKey, error) {
	arr, err := r.Array()
	if err != nil {
		return nil, &memberError{reason: "is not an array of keys", cause: err}
	}
	var keys []RingFileKey
	for {
		more, err := arr.Next()
		if err != nil {
			return nil, &memberError{reason: "is not strict JSON", cause: err}
		}
		if !more {
			return keys, nil
		}
		if len(keys) == MaxKeys {
			return nil, &memberError{reason: fmt.Sprintf("holds more than %d keys", MaxKeys)}
		}
		k, err := readFileKey(r)
		if err != nil {
			var fe *memberError
			if errors.As(err, &fe) {
				fe.path = fmt.Sprintf("[%d]%s", len(keys), fe.path)
				return nil, fe
			}
			return nil, err
		}
		keys = append(keys, k)
	}
}

func readFileKey(r *jsonx.Reader) (RingFileKey, error) {
	var k RingFileKey
	obj, err := r.Object()
	if err != nil {
		return k, &memberError{reason: "is not a JSON object", cause: err}
	}
	var seen jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return k, &memberError{reason: "is not strict JSON", cause: err}
		}
		if !ok {
			return k, nil
		}
		member := string(name)
		if !seen.Add(name) {
			return k, &memberError{path: "." + member, reason: "appears twice"}
		}
		switch member {
		case fileKey:
			k.Key, err = readText(r)
		case filePublicKeys:
			k.PublicKeys, err = readText(r)
		case fileKeyID:
			k.KeyID, err = readText(r)
			if err == nil && len(k.KeyID) > MaxKeyIDBytes {
				err = &memberError{reason: fmt.Sprintf("is longer than %d bytes", MaxKeyIDBytes)}
			}
		case fileInDiscovery:
			k.PublishInDiscovery, err = r.Bool()
			if err != nil {
				err = &memberError{reason: "is not true or false", cause: err}
			}
		case filePublished:
			k.Published, err = readTime(r)
		case filePrimary:
			k.Primary, err = readTime(r)
		case fileRetired:
			k.Retired, err = readTime(r)
		default:
			return k, &memberError{path: "." + member, reason: "is not a member of a key entry (its members: " + fileKey + " or " + filePublicKeys + ", " + fileKeyID + ", " + fileInDiscovery + ", " + filePublished + ", " + filePrimary + ", " + fileRetired + ")"}
		}
		if err != nil {
			var fe *memberError
			if errors.As(err, &fe) {
				fe.path = "." + member + fe.path
				return k, fe
			}
			return k, err
		}
	}
}

// Check checks a ring file as ParseRingFile does: settings a ring accepts;
// one to MaxKeys keys, each a Key or PublicKeys (not both), no reference or
// key ID twice, publishInDiscovery only on public keys; times that obey the
// rotation's rules (see [ScheduledKey]), a key's Published time defaulting
// to its Primary time. Whether a key is primary now is checked when the
// ring is made. Errors match [ErrInvalidRingFile].
func (f *RingFile) Check() error {
	st, err := newSettings(f.RefreshHint, f.MaxTokenLifetime, f.MinStaging)
	if err != nil {
		var ce *ksa.ConfigError
		if errors.As(err, &ce) {
			names := map[string]string{
				"extsigner.RingConfig.RefreshHint":      fileRefreshHint,
				"extsigner.RingConfig.MaxTokenLifetime": fileMaxTokenLifetime,
				"extsigner.RingConfig.MinStaging":       fileMinStaging,
			}
			return fileError(names[ce.Field], ce.Reason, nil)
		}
		return fileError("", "", err)
	}
	if len(f.Keys) == 0 {
		return fileError(fileKeys, "holds no key: give at least the key that signs", nil)
	}
	if len(f.Keys) > MaxKeys {
		return fileError(fileKeys, fmt.Sprintf("holds %d keys, more than %d", len(f.Keys), MaxKeys), nil)
	}
	keys := make([]rotation.Key, len(f.Keys))
	for i, k := range f.Keys {
		at := fmt.Sprintf("%s[%d]", fileKeys, i)
		switch {
		case k.Key == "" && k.PublicKeys == "":
			return fileError(at, "names no key: give "+fileKey+" (a signing key) or "+filePublicKeys+" (a PEM file of public keys)", nil)
		case k.Key != "" && k.PublicKeys != "":
			return fileError(at, "gives both "+fileKey+" and "+filePublicKeys+": an entry is one or the other", nil)
		case k.Key != "" && k.PublishInDiscovery:
			return fileError(at+"."+fileInDiscovery, "is for "+filePublicKeys+" entries: signing keys are always in discovery", nil)
		case !utf8.ValidString(k.Key + k.PublicKeys + k.KeyID):
			return fileError(at, "is not UTF-8 text", nil)
		}
		for j, o := range f.Keys[:i] {
			switch {
			case k.Key != "" && o.Key == k.Key, k.PublicKeys != "" && o.PublicKeys == k.PublicKeys:
				return fileError(at, fmt.Sprintf("names the key of keys[%d] again", j), nil)
			case k.KeyID != "" && o.KeyID == k.KeyID:
				return fileError(at+"."+fileKeyID, fmt.Sprintf("%q is the key ID of keys[%d] too", k.KeyID, j), nil)
			}
		}
		// The entry's index is its ID: the rule broken names the entry.
		keys[i] = rotation.Key{ID: strconv.Itoa(i), Published: k.published(), Signs: k.Primary, Retired: k.Retired,
			VerifyOnly: k.PublicKeys != "", Unlisted: k.PublicKeys != "" && !k.PublishInDiscovery}
	}
	_, err = rotation.New(st.policy(), keys)
	var re *rotation.RuleError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &re):
		return fileError("", "", err) // the policy of checked settings: not reached
	case re.Rule == rotation.ErrNoSigner:
		return fileError(fileKeys, "names no key that signs: give the key that signs a "+filePrimary+" time", brokenRule{re})
	case re.Index < 0:
		return fileError(fileKeys, re.Reason, brokenRule{re})
	}
	return fileError(fmt.Sprintf("%s[%d]%s", fileKeys, re.Index, timeField(re.Field, filePublished, filePrimary, fileRetired)), ruleReason(re, keys, st), brokenRule{re})
}

// published is the key's Published time, or its Primary time when it has
// none.
func (k RingFileKey) published() time.Time {
	if k.Published.IsZero() && k.Key != "" {
		return k.Primary
	}
	return k.Published
}

// Open opens the keys of the ring file and returns the configuration of
// its ring: its settings and its Schedule, for [NewRing] (set Now and
// OnChange) or [Ring.Update]. Signing keys are opened with opener (nil
// means keystore.Files{}: PEM file paths); PublicKeys files are read with
// keystore.LoadPublicKeysFile. Each key is checked as the ring checks it
// (a type kube-apiserver accepts, a probe signature of a standard-library
// key), so that an error names the entry of the file, and only here: the
// Signer of a signing key is the key opened, marked as checked, which
// NewRing and Update take as it is while its Key is the one Open returned
// (any other Key is checked again). Errors name the entry and wrap the
// opener's or the key's error.
func (f *RingFile) Open(ctx context.Context, opener keystore.Opener) (RingConfig, error) {
	if err := f.Check(); err != nil {
		return RingConfig{}, err
	}
	if opener == nil {
		opener = keystore.Files{}
	}
	cfg := RingConfig{RefreshHint: f.RefreshHint, MaxTokenLifetime: f.MaxTokenLifetime, MinStaging: f.MinStaging, Schedule: []ScheduledKey{}}
	from := map[string]int{} // key ID: the entry it came from
	for i, k := range f.Keys {
		at := fmt.Sprintf("%s[%d]", fileKeys, i)
		var keys []ScheduledKey
		if k.Key != "" {
			signer, err := opener.Open(ctx, k.Key)
			if err != nil {
				return RingConfig{}, errs.Wrap(prefix, nil, at+": cannot open its key", err)
			}
			keys = []ScheduledKey{{Key: jwks.Key{KeyID: k.KeyID}, Signer: signer}}
		} else {
			pubs, err := keystore.LoadPublicKeysFile(k.PublicKeys)
			if err != nil {
				return RingConfig{}, errs.Wrap(prefix, nil, at+": cannot read its public keys", err)
			}
			if k.KeyID != "" && len(pubs) != 1 {
				return RingConfig{}, fileError(at+"."+fileKeyID, fmt.Sprintf("names one key, but %s holds %d: drop it, or give each key an entry of its own", k.PublicKeys, len(pubs)), nil)
			}
			for _, pub := range pubs {
				key, err := jwks.NewKey(pub)
				if err != nil {
					return RingConfig{}, errs.Wrap(prefix, nil, at+": "+k.PublicKeys+" holds a key the ring refuses", err)
				}
				if k.KeyID != "" {
					key.KeyID = k.KeyID
				}
				key.ExcludeFromDiscovery = !k.PublishInDiscovery
				keys = append(keys, ScheduledKey{Key: key})
			}
		}
		for _, sk := range keys {
			key, prepared, err := checkKey(sk.Key, sk.Signer, sk.Signer == nil)
			if err != nil {
				return RingConfig{}, errs.Wrap(prefix, nil, at+": its key is refused", err)
			}
			if j, dup := from[key.KeyID]; dup {
				return RingConfig{}, keyError(ErrDuplicateKeyID, key.KeyID, fmt.Sprintf("of %s is the key ID of keys[%d] too", at, j), nil)
			}
			from[key.KeyID] = i
			sk.Key = key
			if prepared != nil {
				sk.Signer, sk.Key.Public = newCheckedSigner(sk.Signer, key, prepared)
			}
			sk.Published, sk.Primary, sk.Retired = k.published(), k.Primary, k.Retired
			cfg.Schedule = append(cfg.Schedule, sk)
		}
	}
	if len(cfg.Schedule) > MaxKeys {
		return RingConfig{}, keyError(ErrTooManyKeys, "", fmt.Sprintf("the ring file's public-key files hold %d keys in all, more than %d", len(cfg.Schedule), MaxKeys), nil)
	}
	return cfg, nil
}

// RotateOptions say how [RingFile.Rotate] schedules the next key.
type RotateOptions struct {
	// Key is the reference of the next key. Required.
	Key string
	// KeyID is its key ID; empty means Kubernetes' (jwks.KeyID).
	KeyID string
	// Published is when the next key is published: late enough for every
	// signer to have read the new ring file. Required.
	Published time.Time
	// Primary is when it starts signing; zero means Published plus the
	// ring's MinStaging.
	Primary time.Time
	// Now, when set, drops the keys retired at or before it: they are
	// published no more.
	Now time.Time
}

// Rotate returns the next ring file of a rotation: f's keys and the next
// key, published at o.Published and primary from o.Primary, and the key
// that signs before it retired as soon as every token it signed has
// expired (o.Primary plus MaxTokenLifetime, MaxClockSkew,
// tokens.DefaultLeeway and a second). It refuses a rotation that would
// start before one under way ends (a key that becomes the primary after
// o.Published: [ErrRotationUnderWay]). f is unchanged. Errors match
// [ErrInvalidRingFile].
func (f *RingFile) Rotate(o RotateOptions) (*RingFile, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	st, _ := newSettings(f.RefreshHint, f.MaxTokenLifetime, f.MinStaging) // checked
	p := st.policy()
	switch {
	case o.Key == "":
		return nil, fileError("", "no next key to rotate to", nil)
	case o.Published.Before(time.Unix(0, 0)) || o.Published.IsZero():
		return nil, fileError("", "no time to publish the next key at", nil)
	}
	if o.Primary.IsZero() {
		o.Primary = o.Published.Add(p.Propagation)
	}
	next := &RingFile{RefreshHint: f.RefreshHint, MaxTokenLifetime: f.MaxTokenLifetime, MinStaging: f.MinStaging}
	last := -1
	for i, k := range f.Keys {
		if !o.Now.IsZero() && !k.Retired.IsZero() && !k.Retired.After(o.Now) {
			continue
		}
		if !k.Primary.IsZero() && (k.Primary.After(o.Published) || !k.Primary.Before(o.Primary)) {
			underWay := fmt.Sprintf("a rotation is under way: keys[%d] becomes the primary at %s; rotate after that", i, stamp(k.Primary))
			return nil, fileError("", "", errs.Wrap("", ErrRotationUnderWay, underWay, nil))
		}
		next.Keys = append(next.Keys, k)
		if !k.Primary.IsZero() && (last < 0 || k.Primary.After(next.Keys[last].Primary)) {
			last = len(next.Keys) - 1
		}
	}
	if last >= 0 {
		next.Keys[last].Retired = o.Primary.Add(p.RetireWait())
	}
	next.Keys = append(next.Keys, RingFileKey{Key: o.Key, KeyID: o.KeyID, Published: o.Published.UTC(), Primary: o.Primary.UTC()})
	if err := next.Check(); err != nil {
		return nil, err
	}
	return next, nil
}

// AppendJSON appends the ring file as ParseRingFile reads it, indented by
// two spaces, members in a fixed order, absent values left out: times in
// RFC 3339 (UTC), durations in the largest whole unit ("24h", "90s").
func (f *RingFile) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	member := func(indent, name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '\n')
		b = append(b, indent...)
		b = jsonx.AppendString(b, name)
		b = append(b, ": "...)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{fileRefreshHint, f.RefreshHint}, {fileMaxTokenLifetime, f.MaxTokenLifetime}, {fileMinStaging, f.MinStaging}} {
		if d.d != 0 {
			member("  ", d.name)
			b = jsonx.AppendString(b, formatDuration(d.d))
		}
	}
	member("  ", fileKeys)
	b = append(b, '[')
	for i, k := range f.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {"...)
		first = true
		for _, s := range []struct{ name, v string }{{fileKey, k.Key}, {filePublicKeys, k.PublicKeys}, {fileKeyID, k.KeyID}} {
			if s.v != "" {
				member("      ", s.name)
				b = jsonx.AppendString(b, s.v)
			}
		}
		if k.PublishInDiscovery {
			member("      ", fileInDiscovery)
			b = append(b, "true"...)
		}
		for _, t := range []struct {
			name string
			t    time.Time
		}{{filePublished, k.Published}, {filePrimary, k.Primary}, {fileRetired, k.Retired}} {
			if !t.t.IsZero() {
				member("      ", t.name)
				b = jsonx.AppendString(b, stamp(t.t))
			}
		}
		b = append(b, "\n    }"...)
	}
	if len(f.Keys) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "]\n}\n"...)
	return b
}

// formatDuration writes d in its largest whole unit: "24h", "2m", "90s",
// or Go's form for anything finer.
func formatDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
