// Package admissionauth_test proves package admissionauth and the GMSA
// webhook's caller check on real kube-apiservers: v1.37.2 with the alpha
// gate APIServerWebhookAuthenticationToken mints tokens bound to a webhook
// configuration, which the webhook accepts and TokenReview agrees with;
// v1.36.3 mints none and the webhook, without the check, works unchanged.
package admissionauth_test
