// Package federation exchanges Kubernetes service-account tokens for cloud
// credentials (workload identity federation), starting with Microsoft Entra
// ID.
//
// [AzureCredential] is an azcore.TokenCredential for the Azure SDK, built on
// azidentity's ClientAssertionCredential. It is configured from explicit
// options first, then from the environment the Azure workload identity
// webhook injects ($AZURE_CLIENT_ID, $AZURE_TENANT_ID,
// $AZURE_FEDERATED_TOKEN_FILE, $AZURE_AUTHORITY_HOST), and every
// azidentity client option passes through:
//
//	cred, err := federation.NewAzureCredential(federation.AzureConfig{}) // all from the environment
//	client, err := armresources.NewClient(subscription, cred, nil)
//
// The assertion comes from a [TokenSource], by default a [tokens.FileSource]
// over the projected token file, which notices the kubelet's rotation at
// once (a stat at most once a second, no read) and re-reads near expiry, and
// each attempt (retries included) is checked before it leaves: an expired
// token is never sent, where azidentity's own
// WorkloadIdentityCredential may reuse a file's content for ten minutes
// (AADSTS700024 with short-lived tokens). The webhook has mounted the file
// at [TokenPath] since v1.6.0 and at [LegacyTokenPath] before.
//
// Before an assertion is sent it is checked (pre-flight) for what Entra ID
// will check: the audience ([DefaultAudience] unless configured), the time
// left ([DefaultMinRemaining]) and, when configured, the exact issuer and
// subject. A mismatch is a *[PreflightError] that names it (a trailing
// slash, say) instead of a remote code. When Entra ID refuses anyway, the
// AADSTS code is mapped to a typed *[EntraError] with the usual fix:
//
//	_, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: scopes})
//	switch {
//	case errors.Is(err, federation.ErrAssertionAudience): // pre-flight or AADSTS700212: fix the audience
//	case errors.Is(err, federation.ErrNoMatchingCredential), errors.Is(err, federation.ErrAssertionSubject):
//		// AADSTS70021 or 700213: fix the federated identity credential
//	}
//
// The same token source serves other clouds: FileSource.GetIdentityToken is
// the AWS SDK's stscreds.IdentityTokenRetriever, and FileSource.Token fits
// Google's external-account subject-token supplier with a one-line method.
//
// Package entratest is a local stand-in for Entra ID's token endpoint that
// really verifies assertions through their issuer's discovery document and
// JWKS, for testing without a cloud.
package federation
