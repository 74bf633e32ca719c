// Package azblob is the publish.Store of an Azure Blob container
// (https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX), over the Azure
// SDK (azblob, azidentity): a leaf package, so that only its importers
// build the SDK. Give its Open to publish.Config.Openers:
//
//	cfg := publish.Config{Openers: map[publish.Kind]publish.Opener{publish.Azure: azblob.Open}}
//
// Credentials: AZURE_STORAGE_CONNECTION_STRING when set (an account key or
// a SAS, and the endpoint: Azurite in tests), else azidentity's
// DefaultAzureCredential (environment, workload identity, managed
// identity, the az CLI...). Versions are ETags; PutIf sends If-Match, or
// If-None-Match: * for an object read absent. Errors are *publish.Error
// with fixes in the az CLI's words.
package azblob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/internal/sdkerr"
)

// azureConnectionStringEnv names the connection string the az CLI reads
// too: an account key or SAS, and the endpoint (Azurite's in tests).
const azureConnectionStringEnv = "AZURE_STORAGE_CONNECTION_STRING"

// azureStore publishes to an Azure Blob container.
type azureStore struct {
	loc       publish.Location
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

// Open returns the store of an Azure location, as publish.Opener.
func Open(_ context.Context, loc publish.Location, cfg publish.Config) (publish.Store, error) {
	if loc.Kind != publish.Azure {
		return nil, &publish.Error{Kind: publish.ErrLocation, What: "location " + strconv.Quote(publish.RedactURL(loc.Raw)) + " is not of kind " + string(publish.Azure)}
	}
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: cfg.Client(),
		Retry:     policy.RetryOptions{MaxRetries: 2},
	}}
	if cs := cfg.Env(azureConnectionStringEnv); cs != "" {
		if acct := connectionStringAccount(cs); acct != "" && !strings.EqualFold(acct, loc.Account) {
			return nil, &publish.Error{Kind: publish.ErrLocation, What: fmt.Sprintf("%s is for account %q, not %q", azureConnectionStringEnv, acct, loc.Account),
				Fix: "give the location the connection string's account, or unset " + azureConnectionStringEnv}
		}
		c, err := azblob.NewClientFromConnectionString(cs, opts)
		if err != nil {
			// The SDK's message may quote the string: never pass it on.
			return nil, &publish.Error{Kind: publish.ErrNoCredentials, What: azureConnectionStringEnv + " does not parse", Fix: "set it to the connection string az storage account show-connection-string prints"}
		}
		return &azureStore{loc: loc, container: c.ServiceClient().NewContainerClient(loc.Bucket), viaConnectionString: true}, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: azcore.ClientOptions{Transport: cfg.Client()}})
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrNoCredentials, What: "no Azure credentials", Fix: azureCredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	c, err := azblob.NewClient("https://"+loc.Host+"/", markedCredential{cred: cred}, opts)
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrLocation, What: "Azure blob endpoint https://" + loc.Host, Fix: "check the account name in the location", Err: err}
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

func (s *azureStore) Location() publish.Location { return s.loc }

func (s *azureStore) PublicURL() string {
	return s.loc.PublicURL()
}

func (s *azureStore) Preflight(ctx context.Context) (publish.Preflight, error) {
	fix := fmt.Sprintf("az storage container set-permission --account-name %s --name %s --public-access blob (the account must allow blob public access: az storage account update --name %s --allow-blob-public-access true)",
		s.loc.Account, s.loc.Bucket, s.loc.Account)
	props, err := s.container.GetProperties(ctx, nil)
	if err != nil {
		err = s.error(err, "reading container "+strconv.Quote(s.loc.Bucket)+" of account "+strconv.Quote(s.loc.Account))
		if errors.Is(err, publish.ErrPermissionDenied) {
			// A role that may write blobs may lack the container's
			// properties: its writes and reads tell.
			return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
		}
		return publish.Preflight{}, err
	}
	if props.BlobPublicAccess == nil || *props.BlobPublicAccess == "" {
		return publish.Preflight{Access: publish.AccessPrivate, AccessFix: fix}, nil
	}
	return publish.Preflight{Access: publish.AccessPublic, AccessFix: fix}, nil
}

// Get reads the blob; its version is its ETag.
func (s *azureStore) Get(ctx context.Context, name string, max int64) ([]byte, publish.Version, error) {
	resp, err := s.container.NewBlobClient(s.loc.Key(name)).DownloadStream(ctx, nil)
	if err != nil {
		return nil, "", s.error(err, "reading "+s.loc.URL(name))
	}
	defer resp.Body.Close()
	data, err := publish.ReadObject(resp.Body, s.loc.URL(name), max)
	if err != nil {
		return nil, "", err
	}
	var v publish.Version
	if resp.ETag != nil {
		v = publish.Version(*resp.ETag)
	}
	return data, v, nil
}

func (s *azureStore) Put(ctx context.Context, o publish.Object) error {
	return s.put(ctx, o, nil)
}

// PutIf writes with If-Match: the ETag read, or If-None-Match: * for a
// blob read absent.
func (s *azureStore) PutIf(ctx context.Context, o publish.Object, v publish.Version) error {
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

func (s *azureStore) put(ctx context.Context, o publish.Object, cond *blob.AccessConditions) error {
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
		return &publish.Error{Kind: publish.ErrNoCredentials, What: what + ": no Azure credentials", Fix: azureCredFix, Err: sdkerr.Summed(sdkerr.FirstLine(ce.err.Error()), ce.err)}
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "check that the account " + strconv.Quote(s.loc.Account) + " exists and is reachable", Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	code := re.ErrorCode
	if code == "" {
		code = http.StatusText(re.StatusCode)
	}
	short := sdkerr.Summed(fmt.Sprintf("%d %s", re.StatusCode, code), err)
	switch {
	case bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists) || re.StatusCode == http.StatusPreconditionFailed:
		return &publish.Error{Kind: publish.ErrChanged, What: what + ": it changed since it was read", Err: short}
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": no such container",
			Fix: fmt.Sprintf("create it: az storage container create --account-name %s --name %s --public-access blob", s.loc.Account, s.loc.Bucket), Err: short}
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ResourceNotFound) || re.StatusCode == http.StatusNotFound:
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": not found", Err: short}
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation):
		fix := azureCredFix
		if s.viaConnectionString {
			fix = "set " + azureConnectionStringEnv + " to the account's current connection string (az storage account show-connection-string)"
		}
		return &publish.Error{Kind: publish.ErrNoCredentials, What: what + ": the credentials were refused", Fix: fix, Err: short}
	case re.StatusCode == http.StatusForbidden:
		return &publish.Error{Kind: publish.ErrPermissionDenied, What: what + ": permission denied",
			Fix: fmt.Sprintf("grant the identity the Storage Blob Data Contributor role on the container: az role assignment create --role \"Storage Blob Data Contributor\" --assignee IDENTITY --scope .../storageAccounts/%s/blobServices/default/containers/%s", s.loc.Account, s.loc.Bucket),
			Err: short}
	}
	return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "try again; if it persists, see the store's status", Err: short}
}
