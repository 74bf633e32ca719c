package credspec

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of Kubernetes' API validation of windowsOptions.
const (
	// MaxRunAsUserNameDomainLength bounds the domain part of runAsUserName
	// (it must be under this many characters).
	MaxRunAsUserNameDomainLength = 256
	// MaxRunAsUserNameUserLength bounds the user part of runAsUserName.
	MaxRunAsUserNameUserLength = 104
)

// windowsPatterns are the regular expressions of Kubernetes' validation,
// compiled once on first use.
type windowsPatterns struct {
	ctrl, netBIOS, dnsDomain, badUserChars, onlyDotsSpaces *regexp.Regexp
}

var patterns = sync.OnceValue(func() *windowsPatterns {
	const label = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	return &windowsPatterns{
		ctrl:           regexp.MustCompile(`[[:cntrl:]]+`),
		netBIOS:        regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`),
		dnsDomain:      regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, label, label)),
		badUserChars:   regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`),
		onlyDotsSpaces: regexp.MustCompile(`^[\. ]+$`),
	}
})

// CheckWindowsOptions applies Kubernetes' API validation of a
// windowsOptions block (pod or container level) and returns its errors with
// Kubernetes' messages, rooted at path:
//   - gmsaCredentialSpecName must be a DNS-1123 subdomain;
//   - gmsaCredentialSpec must be non-empty and at most [MaxSize] bytes (its
//     JSON is not checked);
//   - runAsUserName must be a valid [DOMAIN\]USER.
//
// hostProcess rules, which span the whole pod, are not checked.
func CheckWindowsOptions(opts *corev1.WindowsSecurityContextOptions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if opts == nil {
		return errs
	}
	if opts.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*opts.GMSACredentialSpecName) {
			errs = append(errs, field.Invalid(path.Child("gmsaCredentialSpecName"), opts.GMSACredentialSpecName, msg))
		}
	}
	if opts.GMSACredentialSpec != nil {
		if n := len(*opts.GMSACredentialSpec); n == 0 {
			errs = append(errs, field.Invalid(path.Child("gmsaCredentialSpec"), opts.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if n > MaxSize {
			errs = append(errs, field.Invalid(path.Child("gmsaCredentialSpec"), opts.GMSACredentialSpec, fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", MaxSize/1024)))
		}
	}
	if opts.RunAsUserName != nil {
		for _, msg := range runAsUserNameErrors(*opts.RunAsUserName) {
			errs = append(errs, field.Invalid(path.Child("runAsUserName"), opts.RunAsUserName, msg))
		}
	}
	return errs
}

func runAsUserNameErrors(v string) []string {
	p := patterns()
	if v == "" {
		return []string{"runAsUserName cannot be an empty string"}
	}
	if p.ctrl.MatchString(v) {
		return []string{"runAsUserName cannot contain control characters"}
	}
	parts := strings.Split(v, "\\")
	if len(parts) > 2 {
		return []string{"runAsUserName cannot contain more than one backslash"}
	}
	var msgs []string
	domain, user, hasDomain := "", parts[0], false
	if len(parts) == 2 {
		domain, user, hasDomain = parts[0], parts[1], true
	}
	if len(domain) >= MaxRunAsUserNameDomainLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's Domain length must be under %d characters", MaxRunAsUserNameDomainLength))
	}
	if hasDomain && !p.netBIOS.MatchString(domain) && !p.dnsDomain.MatchString(domain) {
		msgs = append(msgs, "runAsUserName's Domain doesn't match the NetBios nor the DNS format")
	}
	if n := len(user); n == 0 {
		msgs = append(msgs, "runAsUserName's User cannot be empty")
	} else if n > MaxRunAsUserNameUserLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", MaxRunAsUserNameUserLength))
	}
	if p.onlyDotsSpaces.MatchString(user) {
		msgs = append(msgs, "runAsUserName's User cannot contain only periods or spaces")
	}
	if p.badUserChars.MatchString(user) {
		msgs = append(msgs, `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`)
	}
	return msgs
}
