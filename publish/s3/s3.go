// Package s3 is the publish.Store of an Amazon S3 bucket (s3://BUCKET/PREFIX),
// or an S3-compatible server's, over aws-sdk-go-v2: a leaf package, so
// that only its importers build the SDK. Give its Open to
// publish.Config.Openers:
//
//	cfg := publish.Config{Openers: map[publish.Kind]publish.Opener{publish.S3: s3.Open}}
//
// Credentials come from the AWS SDK's default chain (environment, shared
// files, web identity for IRSA, EC2/ECS roles), the region from AWS_REGION
// and the profile; AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL point it at
// another endpoint, addressed path-style, and AWS_CA_BUNDLE adds roots.
// Versions are ETags; PutIf sends If-Match, or If-None-Match: * for an
// object read absent (a server that ignores them writes unconditionally).
// Errors are *publish.Error with fixes in the aws CLI's words.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/internal/sdkerr"
)

// s3Store publishes to an S3 bucket.
type s3Store struct {
	loc    publish.Location
	client *s3.Client
	region string
	// endpoint is the endpoint set in the environment, "" for AWS's.
	endpoint string
}

const s3CredFix = "give the AWS SDK credentials as the aws CLI finds them: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or IRSA (AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE)"

// Open returns the store of an S3 location, as publish.Opener.
func Open(ctx context.Context, loc publish.Location, cfg publish.Config) (publish.Store, error) {
	if loc.Kind != publish.S3 {
		return nil, &publish.Error{Kind: publish.ErrLocation, What: "location " + strconv.Quote(publish.RedactURL(loc.Raw)) + " is not of kind " + string(publish.S3)}
	}
	// The SDK's own client, unless the caller gives one: it can add the
	// roots of AWS_CA_BUNDLE, which a plain *http.Client cannot.
	var client config.HTTPClient = awshttp.NewBuildableClient().WithTimeout(publish.RequestTimeout).WithTransportOptions(cfg.Trust)
	if cfg.HTTPClient != nil {
		client = cfg.HTTPClient
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(client))
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrNoCredentials, What: "the AWS configuration does not load", Fix: s3CredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	if awsCfg.Region == "" {
		return nil, &publish.Error{Kind: publish.ErrLocation, What: "no AWS region for bucket " + strconv.Quote(loc.Bucket), Fix: "set AWS_REGION to the bucket's region (aws s3api get-bucket-location --bucket " + loc.Bucket + ")"}
	}
	st := &s3Store{loc: loc, region: awsCfg.Region}
	if awsCfg.BaseEndpoint != nil {
		st.endpoint = *awsCfg.BaseEndpoint
	}
	st.client = s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		// An endpoint of the environment's (an S3-compatible server)
		// is addressed by path: its host has no bucket subdomains.
		o.UsePathStyle = st.endpoint != ""
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return st, nil
}

func (s *s3Store) Location() publish.Location { return s.loc }

// PublicURL is the bucket's virtual-hosted URL in its region.
func (s *s3Store) PublicURL() string {
	u := fmt.Sprintf("https://%s.s3.%s.amazonaws.com", s.loc.Bucket, s.region)
	if s.loc.Prefix != "" {
		u += "/" + s.loc.Prefix
	}
	return u
}

func (s *s3Store) Preflight(ctx context.Context) (publish.Preflight, error) {
	if _, err := s.client.Options().Credentials.Retrieve(ctx); err != nil {
		return publish.Preflight{}, &publish.Error{Kind: publish.ErrNoCredentials, What: "no AWS credentials for bucket " + strconv.Quote(s.loc.Bucket), Fix: s3CredFix, Err: sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)}
	}
	fix := fmt.Sprintf("let anyone read the prefix: a bucket policy allowing s3:GetObject on arn:aws:s3:::%s/%s to Principal \"*\" (aws s3api put-bucket-policy), with the bucket's Block Public Access off (aws s3api put-public-access-block), or serve it through CloudFront at a public URL of its own",
		s.loc.Bucket, s.loc.Key("*"))
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.loc.Bucket}); err != nil {
		err = s.error(err, "reading bucket "+strconv.Quote(s.loc.Bucket), true)
		if errors.Is(err, publish.ErrPermissionDenied) {
			// HeadBucket needs s3:ListBucket, which a publisher
			// may lack: its writes and reads tell.
			return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
		}
		return publish.Preflight{}, err
	}
	status, err := s.client.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: &s.loc.Bucket})
	switch {
	case err != nil:
		// No policy at all (NoSuchBucketPolicy) means private; anything
		// else (not implemented, not allowed) leaves it unknown.
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucketPolicy" {
			return publish.Preflight{Access: publish.AccessPrivate, AccessFix: fix}, nil
		}
		return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
	case status.PolicyStatus == nil || status.PolicyStatus.IsPublic == nil:
		// An answer that says nothing (an S3-compatible server
		// without the call) is no proof of privacy.
		return publish.Preflight{Access: publish.AccessUnknown, AccessFix: fix}, nil
	case *status.PolicyStatus.IsPublic:
		return publish.Preflight{Access: publish.AccessPublic, AccessFix: fix}, nil
	}
	return publish.Preflight{Access: publish.AccessPrivate, AccessFix: fix}, nil
}

// Get reads the object; its version is its ETag.
func (s *s3Store) Get(ctx context.Context, name string, max int64) ([]byte, publish.Version, error) {
	key := s.loc.Key(name)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.loc.Bucket, Key: &key})
	if err != nil {
		return nil, "", s.error(err, "reading "+s.loc.URL(name), false)
	}
	defer out.Body.Close()
	data, err := publish.ReadObject(out.Body, s.loc.URL(name), max)
	if err != nil {
		return nil, "", err
	}
	return data, publish.Version(aws.ToString(out.ETag)), nil
}

func (s *s3Store) Put(ctx context.Context, o publish.Object) error {
	return s.put(ctx, o, nil)
}

// PutIf writes with If-Match: the ETag read, or If-None-Match: * for an
// object read absent (S3's conditional writes; a server that ignores
// them writes unconditionally).
func (s *s3Store) PutIf(ctx context.Context, o publish.Object, v publish.Version) error {
	return s.put(ctx, o, &v)
}

func (s *s3Store) put(ctx context.Context, o publish.Object, v *publish.Version) error {
	key := s.loc.Key(o.Name)
	in := &s3.PutObjectInput{
		Bucket: &s.loc.Bucket, Key: &key, Body: bytes.NewReader(o.Data),
		ContentLength: aws.Int64(int64(len(o.Data))),
		ContentType:   &o.ContentType, CacheControl: &o.CacheControl,
	}
	switch {
	case v == nil:
	case *v == "":
		in.IfNoneMatch = aws.String("*")
	default:
		in.IfMatch = aws.String(string(*v))
	}
	_, err := s.client.PutObject(ctx, in)
	if err != nil {
		return s.error(err, "writing "+s.loc.URL(o.Name), false)
	}
	return nil
}

// error sorts an S3 failure into its kind, with the fix; bucket says the
// request was about the bucket itself (HEAD answers 404 without a code).
func (s *s3Store) error(err error, what string, bucket bool) error {
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	short := sdkerr.Summed(sdkerr.FirstLine(err.Error()), err)
	if status != 0 {
		short = sdkerr.Summed(fmt.Sprintf("%d %s", status, code), err)
	}
	switch {
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed" || code == "ConditionalRequestConflict":
		return &publish.Error{Kind: publish.ErrChanged, What: what + ": it changed since it was read", Err: short}
	case code == "NoSuchBucket" || (bucket && status == http.StatusNotFound):
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": no such bucket in " + s.region,
			Fix: "create it (aws s3 mb s3://" + s.loc.Bucket + " --region " + s.region + "), or set AWS_REGION to its region", Err: short}
	case code == "NoSuchKey" || status == http.StatusNotFound:
		return &publish.Error{Kind: publish.ErrNotFound, What: what + ": not found", Err: short}
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "ExpiredToken" || code == "InvalidToken":
		return &publish.Error{Kind: publish.ErrNoCredentials, What: what + ": the credentials were refused", Fix: s3CredFix, Err: short}
	case status == http.StatusForbidden || code == "AccessDenied":
		return &publish.Error{Kind: publish.ErrPermissionDenied, What: what + ": permission denied",
			Fix: fmt.Sprintf("allow the identity s3:PutObject and s3:GetObject on arn:aws:s3:::%s/%s and s3:ListBucket on arn:aws:s3:::%s", s.loc.Bucket, s.loc.Key("*"), s.loc.Bucket),
			Err: short}
	case status == http.StatusMovedPermanently || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed":
		return &publish.Error{Kind: publish.ErrLocation, What: what + ": the bucket is in another region than " + s.region, Fix: "set AWS_REGION to the bucket's region (aws s3api get-bucket-location --bucket " + s.loc.Bucket + ")", Err: short}
	}
	if status == 0 {
		return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "check the network and the endpoint", Err: short}
	}
	return &publish.Error{Kind: publish.ErrStore, What: what, Fix: "try again; if it persists, see the store's status", Err: short}
}
