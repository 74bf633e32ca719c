//go:build !ksa_noazblob

package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// azureConnectionStringEnv names the connection string the az CLI reads
// too: an account key or SAS, and the endpoint (Azurite's in tests).
const azureConnectionStringEnv = "AZURE_STORAGE_CONNECTION_STRING"

// azureStore publishes to an Azure Blob container.
type azureStore struct {
	loc       Location
	container *container.Client
	// viaConnectionString: the credentials are the connection string's.
	viaConnectionString bool
}

// credError marks a failure of the token credential, so that a request
// failing for want of credentials is told from one the service refused.
type credError struct{ err error }

func (e *credError) Error() string { return e.err.Error() }
func (e *credError) Unwrap() error { return e.err }

// markedCredential wraps a TokenCredential, marking its failures.
type markedCredential struct{ cred azcore.TokenCredential }

func (m markedCredential) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := m.cred.GetToken(ctx, o)
	if err != nil {
		return tok, &credError{err: err}
	}
	return tok, nil
}

const azureCredFix = "sign in as the az CLI does (az login), or run with Azure workload identity (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE), a managed identity, or AZURE_STORAGE_CONNECTION_STRING"

func openAzure(_ context.Context, loc Location, cfg Config) (Store, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: cfg.client(),
		Retry:     policy.RetryOptions{MaxRetries: 2},
	}}
	if cs := getenv(azureConnectionStringEnv); cs != "" {
		if acct := connectionStringAccount(cs); acct != "" && !strings.EqualFold(acct, loc.Account) {
			return nil, &Error{Kind: ErrLocation, What: fmt.Sprintf("%s is for account %q, not %q", azureConnectionStringEnv, acct, loc.Account),
				Fix: "give --to the connection string's account, or unset " + azureConnectionStringEnv}
		}
		c, err := azblob.NewClientFromConnectionString(cs, opts)
		if err != nil {
			// The SDK's message may quote the string: never pass it on.
			return nil, &Error{Kind: ErrNoCredentials, What: azureConnectionStringEnv + " does not parse", Fix: "set it to the connection string az storage account show-connection-string prints"}
		}
		return &azureStore{loc: loc, container: c.ServiceClient().NewContainerClient(loc.Bucket), viaConnectionString: true}, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: azcore.ClientOptions{Transport: cfg.client()}})
	if err != nil {
		return nil, &Error{Kind: ErrNoCredentials, What: "no Azure credentials", Fix: azureCredFix, Err: summed(firstLine(err.Error()), err)}
	}
	c, err := azblob.NewClient("https://"+loc.host+"/", markedCredential{cred: cred}, opts)
	if err != nil {
		return nil, &Error{Kind: ErrLocation, What: "Azure blob endpoint https://" + loc.host, Fix: "check the account name in --to", Err: err}
	}
	return &azureStore{loc: loc, container: c.ServiceClient().NewContainerClient(loc.Bucket)}, nil
}

// connectionStringAccount returns the AccountName of a connection string,
// and nothing else of it.
func connectionStringAccount(cs string) string {
	for _, part := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(strings.TrimSpace(k), "AccountName") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (s *azureStore) Location() Location { return s.loc }

func (s *azureStore) PublicURL() string {
	u := "https://" + s.loc.host + "/" + s.loc.Bucket
	if s.loc.Prefix != "" {
		u += "/" + s.loc.Prefix
	}
	return u
}

func (s *azureStore) Preflight(ctx context.Context) (Preflight, error) {
	fix := fmt.Sprintf("az storage container set-permission --account-name %s --name %s --public-access blob (the account must allow blob public access: az storage account update --name %s --allow-blob-public-access true)",
		s.loc.Account, s.loc.Bucket, s.loc.Account)
	props, err := s.container.GetProperties(ctx, nil)
	if err != nil {
		err = s.error(err, "reading container "+quote(s.loc.Bucket)+" of account "+quote(s.loc.Account))
		if errors.Is(err, ErrPermissionDenied) {
			// A role that may write blobs may lack the container's
			// properties: its writes and reads tell.
			return Preflight{Access: AccessUnknown, AccessFix: fix}, nil
		}
		return Preflight{}, err
	}
	if props.BlobPublicAccess == nil || *props.BlobPublicAccess == "" {
		return Preflight{Access: AccessPrivate, AccessFix: fix}, nil
	}
	return Preflight{Access: AccessPublic, AccessFix: fix}, nil
}

func (s *azureStore) Get(ctx context.Context, name string, max int64) ([]byte, error) {
	data, _, err := s.GetVersion(ctx, name, max)
	return data, err
}

// GetVersion reads the blob; its version is its ETag.
func (s *azureStore) GetVersion(ctx context.Context, name string, max int64) ([]byte, Version, error) {
	resp, err := s.container.NewBlobClient(s.loc.Key(name)).DownloadStream(ctx, nil)
	if err != nil {
		return nil, "", s.error(err, "reading "+s.loc.URL(name))
	}
	defer resp.Body.Close()
	data, err := readObject(resp.Body, s.loc.URL(name), max, "delete the blob, or publish elsewhere")
	if err != nil {
		return nil, "", err
	}
	var v Version
	if resp.ETag != nil {
		v = Version(*resp.ETag)
	}
	return data, v, nil
}

func (s *azureStore) Put(ctx context.Context, o Object) error {
	return s.put(ctx, o, nil)
}

// PutIf writes with If-Match: the ETag read, or If-None-Match: * for a
// blob read absent.
func (s *azureStore) PutIf(ctx context.Context, o Object, v Version) error {
	cond := &blob.ModifiedAccessConditions{}
	if v == "" {
		absent := azcore.ETagAny
		cond.IfNoneMatch = &absent
	} else {
		etag := azcore.ETag(v)
		cond.IfMatch = &etag
	}
	return s.put(ctx, o, &blob.AccessConditions{ModifiedAccessConditions: cond})
}

func (s *azureStore) put(ctx context.Context, o Object, cond *blob.AccessConditions) error {
	body := readSeekNopCloser{bytes.NewReader(o.Data)}
	_, err := s.container.NewBlockBlobClient(s.loc.Key(o.Name)).Upload(ctx, body, &blockblob.UploadOptions{
		HTTPHeaders:      &blob.HTTPHeaders{BlobContentType: &o.ContentType, BlobCacheControl: &o.CacheControl},
		AccessConditions: cond,
	})
	if err != nil {
		return s.error(err, "writing "+s.loc.URL(o.Name))
	}
	return nil
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// error sorts an azblob failure into its kind, with the fix.
func (s *azureStore) error(err error, what string) error {
	var ce *credError
	if errors.As(err, &ce) {
		return &Error{Kind: ErrNoCredentials, What: what + ": no Azure credentials", Fix: azureCredFix, Err: summed(firstLine(ce.err.Error()), ce.err)}
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return &Error{Kind: ErrStore, What: what, Fix: "check that the account " + quote(s.loc.Account) + " exists and is reachable", Err: summed(firstLine(err.Error()), err)}
	}
	code := re.ErrorCode
	if code == "" {
		code = http.StatusText(re.StatusCode)
	}
	short := summed(fmt.Sprintf("%d %s", re.StatusCode, code), err)
	switch {
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists) || re.StatusCode == http.StatusPreconditionFailed:
		return &Error{Kind: ErrChanged, What: what + ": it changed since it was read", Err: short}
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return &Error{Kind: ErrNotFound, What: what + ": no such container",
			Fix: fmt.Sprintf("create it: az storage container create --account-name %s --name %s --public-access blob", s.loc.Account, s.loc.Bucket), Err: short}
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ResourceNotFound) || re.StatusCode == http.StatusNotFound:
		return &Error{Kind: ErrNotFound, What: what + ": not found", Err: short}
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation):
		fix := azureCredFix
		if s.viaConnectionString {
			fix = "set " + azureConnectionStringEnv + " to the account's current connection string (az storage account show-connection-string)"
		}
		return &Error{Kind: ErrNoCredentials, What: what + ": the credentials were refused", Fix: fix, Err: short}
	case re.StatusCode == http.StatusForbidden:
		return &Error{Kind: ErrPermissionDenied, What: what + ": permission denied",
			Fix: fmt.Sprintf("grant the identity the Storage Blob Data Contributor role on the container: az role assignment create --role \"Storage Blob Data Contributor\" --assignee IDENTITY --scope .../storageAccounts/%s/blobServices/default/containers/%s", s.loc.Account, s.loc.Bucket),
			Err: short}
	}
	return &Error{Kind: ErrStore, What: what, Fix: "try again; if it persists, see the store's status", Err: short}
}
