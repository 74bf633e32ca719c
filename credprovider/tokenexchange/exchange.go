package tokenexchange

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The URNs of RFC 8693.
const (
	// GrantType is the grant_type of a token exchange.
	GrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeJWT is the subject_token_type of a service-account token.
	TokenTypeJWT = "urn:ietf:params:oauth:token-type:jwt"
	// TokenTypeAccessToken is the usual issued_token_type: an OAuth 2.0
	// access token.
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// Defaults of [Config].
const (
	// DefaultTimeout bounds one exchange when Config.Client is nil: 20
	// seconds, well under the minute after which the kubelet kills a
	// plugin, so a hung endpoint ends with the plugin's own message.
	DefaultTimeout = 20 * time.Second
	// DefaultMaxResponseBytes bounds the endpoint's answer: 64 KiB.
	DefaultMaxResponseBytes = 64 << 10
)

// Config configures an [Exchanger]. The zero value of every optional field
// is the safe choice.
type Config struct {
	// TokenURL is the token endpoint; required, https (http only with
	// InsecureAllowHTTP), without user information or fragment.
	TokenURL string
	// InsecureAllowHTTP accepts an http TokenURL, which sends the pod's
	// token in the clear: for a loopback endpoint in tests.
	InsecureAllowHTTP bool
	// Audience and Resource name the service the issued token is for
	// (RFC 8693's audience and resource parameters); Scopes its scope.
	// Each is sent when set.
	Audience string
	Resource string
	Scopes   []string
	// RequestedTokenType is sent as requested_token_type when set.
	RequestedTokenType string
	// ClientID and ClientSecret authenticate the client with HTTP Basic
	// (RFC 6749 2.3.1) when ClientID is set; most exchanges of a
	// service-account token need no client authentication.
	ClientID, ClientSecret string
	// Client makes the request; nil means a client with DefaultTimeout.
	// A client given SHOULD have a timeout.
	Client *http.Client
	// MaxResponseBytes bounds the answer; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// Now is the clock expires_in counts from; nil means time.Now.
	Now func() time.Time
}

// Exchanger exchanges a subject token for an access token at one token
// endpoint (RFC 8693). It is safe for concurrent use.
type Exchanger struct {
	url      string
	form     url.Values
	id, pass string
	client   *http.Client
	max      int
	now      func() time.Time
}

// New checks cfg and returns its Exchanger.
func New(cfg Config) (*Exchanger, error) {
	u, err := url.Parse(cfg.TokenURL)
	switch {
	case cfg.TokenURL == "":
		return nil, configError("Config.TokenURL", "is required")
	case err != nil || u.Host == "":
		return nil, configError("Config.TokenURL", "is not an absolute URL")
	case u.User != nil || u.Fragment != "":
		return nil, configError("Config.TokenURL", "holds user information or a fragment")
	case u.Scheme != "https" && !(u.Scheme == "http" && cfg.InsecureAllowHTTP):
		return nil, configError("Config.TokenURL", "is not https (http needs InsecureAllowHTTP)")
	case cfg.MaxResponseBytes < 0:
		return nil, configError("Config.MaxResponseBytes", "is negative")
	case cfg.ClientSecret != "" && cfg.ClientID == "":
		return nil, configError("Config.ClientSecret", "is set without ClientID")
	}
	form := url.Values{"grant_type": {GrantType}, "subject_token_type": {TokenTypeJWT}}
	set := func(k, v string) {
		if v != "" {
			form.Set(k, v)
		}
	}
	set("audience", cfg.Audience)
	set("resource", cfg.Resource)
	set("scope", strings.Join(cfg.Scopes, " "))
	set("requested_token_type", cfg.RequestedTokenType)
	e := &Exchanger{url: cfg.TokenURL, form: form, id: cfg.ClientID, pass: cfg.ClientSecret,
		client: cfg.Client, max: cfg.MaxResponseBytes, now: cfg.Now}
	if e.client == nil {
		e.client = &http.Client{Timeout: DefaultTimeout}
	}
	if e.max == 0 {
		e.max = DefaultMaxResponseBytes
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// Token is an issued token.
type Token struct {
	// AccessToken is the issued token.
	AccessToken string
	// IssuedTokenType and TokenType are the answer's issued_token_type
	// and token_type.
	IssuedTokenType, TokenType string
	// Expiry is when the token expires, from expires_in; zero when the
	// endpoint did not say.
	Expiry time.Time
}

// tokenResponse is the answer's JSON.
type tokenResponse struct {
	AccessToken     string          `json:"access_token"`
	IssuedTokenType string          `json:"issued_token_type"`
	TokenType       string          `json:"token_type"`
	ExpiresIn       json.RawMessage `json:"expires_in"`
	Error           string          `json:"error"`
	ErrorDesc       string          `json:"error_description"`
}

// Exchange posts subjectToken to the token endpoint and returns the
// issued token. Neither token ever appears in an error. Errors match
// [ErrExchangeFailed] (with the cause: context.DeadlineExceeded for a
// timeout), [ErrRefused] (a *[RefusedError]) or [ErrBadResponse].
func (e *Exchanger) Exchange(ctx context.Context, subjectToken string) (*Token, error) {
	form := make(url.Values, len(e.form)+1)
	for k, v := range e.form {
		form[k] = v
	}
	form.Set("subject_token", subjectToken)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, failed("", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if e.id != "" {
		req.SetBasicAuth(url.QueryEscape(e.id), url.QueryEscape(e.pass))
	}
	start := e.now()
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL and method
		}
		return nil, failed("POST "+e.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(e.max)+1))
	if err != nil {
		return nil, failed("reading the answer", err)
	}
	if len(body) > e.max {
		return nil, badResponse("the answer is over "+strconv.Itoa(e.max)+" bytes", nil)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	switch {
	case resp.StatusCode >= 500:
		return nil, failed("HTTP "+strconv.Itoa(resp.StatusCode), nil)
	case resp.StatusCode != http.StatusOK:
		re := &RefusedError{StatusCode: resp.StatusCode}
		if jsonErr == nil {
			re.Code, re.Description = bounded(tr.Error), bounded(tr.ErrorDesc)
		}
		return nil, re
	case jsonErr != nil:
		return nil, badResponse("the answer is not JSON", nil)
	case tr.AccessToken == "":
		return nil, badResponse("no access_token", nil)
	}
	tok := &Token{AccessToken: tr.AccessToken, IssuedTokenType: tr.IssuedTokenType, TokenType: tr.TokenType}
	if len(tr.ExpiresIn) > 0 && string(tr.ExpiresIn) != "null" {
		secs, err := strconv.ParseInt(string(tr.ExpiresIn), 10, 64)
		if err != nil || secs <= 0 || secs > 10*365*24*3600 {
			return nil, badResponse("expires_in is not a positive number of seconds", nil)
		}
		// counted from the request, so the token is never thought to
		// live longer than it does
		tok.Expiry = start.Add(time.Duration(secs) * time.Second)
	}
	return tok, nil
}

func bounded(s string) string {
	if len(s) > MaxErrorText {
		return s[:MaxErrorText]
	}
	return s
}
