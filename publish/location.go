package publish

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// Kind is the kind of store a location names.
type Kind string

// The kinds of store.
const (
	// Azure is an Azure Blob container.
	Azure Kind = "azure"
	// S3 is an Amazon S3 bucket (or an S3-compatible server's).
	S3 Kind = "s3"
	// GCS is a Google Cloud Storage bucket.
	GCS Kind = "gcs"
	// Dir is a local directory.
	Dir Kind = "dir"
)

// azureHostSuffixes are the blob endpoints of Azure's clouds.
var azureHostSuffixes = []string{
	".blob.core.windows.net",
	".blob.core.chinacloudapi.cn",
	".blob.core.usgovcloudapi.net",
}

// Location is where documents are published: a bucket or container and a
// prefix inside it, or a directory.
type Location struct {
	Kind Kind
	// Account is the Azure storage account.
	Account string
	// Bucket is the S3 or GCS bucket, or the Azure container.
	Bucket string
	// Prefix is the path inside the bucket, without a leading or
	// trailing slash ("" for the bucket's root).
	Prefix string
	// Path is the directory of a Dir location.
	Path string
	// Host is the Azure blob endpoint's host
	// ("ACCOUNT.blob.core.windows.net").
	Host string
	// Raw is the location as given.
	Raw string
}

// String returns the location as given.
func (l Location) String() string { return l.Raw }

// Key returns the object name of name (a slash-separated path relative to
// the prefix) inside the bucket.
func (l Location) Key(name string) string {
	if l.Prefix == "" {
		return name
	}
	return l.Prefix + "/" + name
}

// URL returns where name is written, for messages.
func (l Location) URL(name string) string {
	switch l.Kind {
	case Azure:
		return "https://" + l.Host + "/" + l.Bucket + "/" + l.Key(name)
	case S3:
		return "s3://" + l.Bucket + "/" + l.Key(name)
	case GCS:
		return "gs://" + l.Bucket + "/" + l.Key(name)
	}
	return filepath.Join(l.Path, filepath.FromSlash(name))
}

// PublicURL returns the https URL the cloud itself serves the location at
// to anonymous readers, when the location alone says it: Azure Blob's
// container URL and Google Cloud Storage's storage.googleapis.com URL,
// with the prefix. It is "" for S3, whose URL names the bucket's region
// (see [Store.PublicURL]), and for a directory, which a web server of the
// caller's serves.
func (l Location) PublicURL() string {
	suffix := ""
	if l.Prefix != "" {
		suffix = "/" + l.Prefix
	}
	switch l.Kind {
	case Azure:
		return "https://" + l.Host + "/" + l.Bucket + suffix
	case GCS:
		return "https://storage.googleapis.com/" + l.Bucket + suffix
	}
	return ""
}

// RedactURL returns a URL for messages without what may be a credential:
// the user information (user:password@) and the query and fragment (a
// SAS token's sig=...) are cut, each marked by "REDACTED". It works on
// text that does not parse as a URL too; a string without "://" (a path)
// is returned as it is.
func RedactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	cut := false
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest, cut = rest[:i], true
	}
	auth, path, hasPath := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = "REDACTED@" + auth[at+1:]
	}
	out := scheme + "://" + auth
	if hasPath {
		out += "/" + path
	}
	if cut {
		out += "?REDACTED"
	}
	return out
}

// ParseLocation reads a location (its errors are [*Error]s of kind
// ErrLocation, quoting it through [RedactURL]): https://ACCOUNT.blob.core.windows.net/
// CONTAINER/PREFIX (and Azure's other clouds), s3://BUCKET/PREFIX,
// gs://BUCKET/PREFIX, file:///DIR or a path. Query strings, fragments,
// user information, empty or dot segments are refused.
func ParseLocation(raw string) (Location, error) {
	loc := Location{Raw: raw}
	// A refused location is quoted without what may be a credential.
	shown := RedactURL(raw)
	bad := func(fix, format string, args ...any) (Location, error) {
		return Location{}, &Error{Kind: ErrLocation, What: fmt.Sprintf(format, args...), Fix: fix}
	}
	if raw == "" {
		return bad("give a URL such as s3://BUCKET/PREFIX", "no location given")
	}
	scheme, _, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		loc.Kind, loc.Path = Dir, filepath.Clean(raw)
		return loc, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("give a URL such as s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX", "location %q does not parse", shown)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return bad("leave credentials and SAS tokens out of the URL: each store takes them from the environment", "location %q has a query, fragment or user information", shown)
	}
	switch strings.ToLower(scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return bad("write file:///ABSOLUTE/DIR or a plain path", "location %q names a host", shown)
		}
		loc.Kind, loc.Path = Dir, filepath.Clean(filepath.FromSlash(u.Path))
		return loc, nil
	case "s3", "gs":
		loc.Kind = S3
		if strings.ToLower(scheme) == "gs" {
			loc.Kind = GCS
		}
		if u.Host == "" {
			return bad("name the bucket: "+scheme+"://BUCKET/PREFIX", "location %q names no bucket", shown)
		}
		loc.Bucket = u.Host
		loc.Prefix, err = cleanPrefix(u.Path)
	case "https", "http":
		return parseAzure(loc, u, shown)
	default:
		return bad("use s3://, gs://, https://ACCOUNT.blob.core.windows.net/ or file://", "location %q has an unknown scheme %q", shown, scheme)
	}
	if err != nil {
		return bad("write the prefix as slash-separated names, without empty, . or .. segments", "location %q: %s", shown, err)
	}
	return loc, nil
}

// parseAzure reads an Azure blob URL u (its scheme https or http) into loc;
// shown is the URL as errors quote it.
func parseAzure(loc Location, u *url.URL, shown string) (Location, error) {
	bad := func(fix, format string, args ...any) (Location, error) {
		return Location{}, &Error{Kind: ErrLocation, What: fmt.Sprintf(format, args...), Fix: fix}
	}
	host := strings.ToLower(u.Hostname())
	for _, sfx := range azureHostSuffixes {
		if acct, ok := strings.CutSuffix(host, sfx); ok && acct != "" && !strings.Contains(acct, ".") {
			loc.Kind, loc.Account, loc.Host = Azure, acct, host
		}
	}
	if loc.Kind != Azure {
		return bad("give an Azure blob URL https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX (the public URL of a CDN is not a store)",
			"location %q is no store ksa writes to", shown)
	}
	if strings.ToLower(u.Scheme) != "https" || u.Port() != "" {
		return bad("write https://"+host+"/CONTAINER/PREFIX (AZURE_STORAGE_CONNECTION_STRING points at another endpoint, such as Azurite)", "location %q is not Azure's https endpoint", shown)
	}
	container, rest, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if container == "" {
		return bad("name the container: https://"+host+"/CONTAINER/PREFIX", "location %q names no container", shown)
	}
	loc.Bucket = container
	prefix, err := cleanPrefix(rest)
	if err != nil {
		return bad("write the prefix as slash-separated names, without empty, . or .. segments", "location %q: %s", shown, err)
	}
	loc.Prefix = prefix
	return loc, nil
}

// cleanPrefix returns p without leading and trailing slashes, refusing
// empty, "." and ".." segments inside it.
func cleanPrefix(p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("prefix %q has an empty, . or .. segment", p)
		}
	}
	if path.Clean(p) != p {
		return "", fmt.Errorf("prefix %q is not clean", p)
	}
	return p, nil
}
