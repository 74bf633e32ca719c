package signertest

import (
	"strconv"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "signertest"

// Sentinel errors. Every failed check, and every refusal of
// [CheckHeader], matches the sentinel of its level; [Run] refuses a
// configuration with a *ksa.ConfigError.
var (
	// ErrKubernetes: the signer fails a check kube-apiserver makes itself;
	// kube-apiserver would not start with it, or would refuse its answers.
	ErrKubernetes = errs.New(prefix, "kube-apiserver refuses the signer's answer")
	// ErrStrict: the signer fails a check kube-apiserver skips; its tokens
	// may fail later, or it takes input it should refuse.
	ErrStrict = errs.New(prefix, "the signer fails a stricter check")
)

// Level says who makes a check.
type Level uint8

// The levels of checks.
const (
	// LevelKubernetes: kube-apiserver makes the check itself.
	LevelKubernetes Level = iota + 1
	// LevelStrict: kube-apiserver skips the check; ksa's signer passes it.
	LevelStrict
)

// String returns "kubernetes" or "strict".
func (l Level) String() string {
	switch l {
	case LevelKubernetes:
		return "kubernetes"
	case LevelStrict:
		return "strict"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// Failure is a check the signer failed. It matches [ErrKubernetes] or
// [ErrStrict] as Level says; Err is what was wrong (a refused answer,
// matching the same sentinel, or the gRPC status of a call).
type Failure struct {
	Check string
	Level Level
	Err   error
}

func (f *Failure) Error() string {
	return errs.Msg(prefix, f.Check+" ("+f.Level.String()+")", f.Err)
}

// Is reports whether target is the sentinel of the failure's level.
func (f *Failure) Is(target error) bool {
	return (f.Level == LevelKubernetes && target == ErrKubernetes) || (f.Level == LevelStrict && target == ErrStrict)
}

// Unwrap returns what was wrong.
func (f *Failure) Unwrap() error { return f.Err }
