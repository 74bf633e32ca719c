package kubeapi

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/podcert"
)

// PodCertRequest reads a certificates.k8s.io/v1 PodCertificateRequest: its
// identity and spec as a podcert.Request, and its status. A nil object
// gives a zero Request, which podcert's checks refuse, and a zero Status.
// Byte slices and the annotation map are shared with the object, not
// copied.
func PodCertRequest(pcr *certificatesv1.PodCertificateRequest) (podcert.Request, podcert.Status) {
	if pcr == nil {
		return podcert.Request{}, podcert.Status{}
	}
	s := &pcr.Spec
	r := podcert.Request{
		Namespace: pcr.Namespace, Name: pcr.Name, Generation: pcr.Generation,
		SignerName: s.SignerName,
		PodName:    s.PodName, PodUID: string(s.PodUID),
		ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: string(s.ServiceAccountUID),
		NodeName: string(s.NodeName), NodeUID: string(s.NodeUID),
		StubPKCS10Request:         s.StubPKCS10Request,
		UnverifiedUserAnnotations: s.UnverifiedUserAnnotations,
	}
	if s.MaxExpirationSeconds != nil {
		r.MaxExpirationSeconds = *s.MaxExpirationSeconds
	}
	st := &pcr.Status
	return r, podCertStatus(st.Conditions, st.CertificateChain, st.NotBefore, st.BeginRefreshAt, st.NotAfter)
}

// PodCertRequestV1beta1 reads a certificates.k8s.io/v1beta1
// PodCertificateRequest, with either form of proof, as [PodCertRequest]
// reads a v1 object.
func PodCertRequestV1beta1(pcr *certificatesv1beta1.PodCertificateRequest) (podcert.Request, podcert.Status) {
	if pcr == nil {
		return podcert.Request{}, podcert.Status{}
	}
	s := &pcr.Spec
	r := podcert.Request{
		Namespace: pcr.Namespace, Name: pcr.Name, Generation: pcr.Generation,
		SignerName: s.SignerName,
		PodName:    s.PodName, PodUID: string(s.PodUID),
		ServiceAccountName: s.ServiceAccountName, ServiceAccountUID: string(s.ServiceAccountUID),
		NodeName: string(s.NodeName), NodeUID: string(s.NodeUID),
		StubPKCS10Request: s.StubPKCS10Request,
		//lint:ignore SA1019 the older form is still served by v1beta1 and must be checked.
		PKIXPublicKey: s.PKIXPublicKey,
		//lint:ignore SA1019 as above.
		ProofOfPossession:         s.ProofOfPossession,
		UnverifiedUserAnnotations: s.UnverifiedUserAnnotations,
	}
	if s.MaxExpirationSeconds != nil {
		r.MaxExpirationSeconds = *s.MaxExpirationSeconds
	}
	st := &pcr.Status
	return r, podCertStatus(st.Conditions, st.CertificateChain, st.NotBefore, st.BeginRefreshAt, st.NotAfter)
}

// PodCertStatus returns a podcert.Status as a v1 PodCertificateRequest's
// status.
func PodCertStatus(st podcert.Status) certificatesv1.PodCertificateRequestStatus {
	return certificatesv1.PodCertificateRequestStatus{Conditions: conditions(st.Conditions), CertificateChain: st.CertificateChain,
		NotBefore: metaTime(st.NotBefore), BeginRefreshAt: metaTime(st.BeginRefreshAt), NotAfter: metaTime(st.NotAfter)}
}

// PodCertStatusV1beta1 returns a podcert.Status as a v1beta1
// PodCertificateRequest's status.
func PodCertStatusV1beta1(st podcert.Status) certificatesv1beta1.PodCertificateRequestStatus {
	return certificatesv1beta1.PodCertificateRequestStatus{Conditions: conditions(st.Conditions), CertificateChain: st.CertificateChain,
		NotBefore: metaTime(st.NotBefore), BeginRefreshAt: metaTime(st.BeginRefreshAt), NotAfter: metaTime(st.NotAfter)}
}

// ApplyPodCertDecision sets a podcert.Decision's status on a v1 object
// after checking the update with podcert.CheckStatus against the object's
// current status at the decision's time. On error the object is
// unchanged.
func ApplyPodCertDecision(d *podcert.Decision, pcr *certificatesv1.PodCertificateRequest) error {
	req, old := PodCertRequest(pcr)
	st := d.Status()
	if err := podcert.CheckStatus(&req, old, st, d.At); err != nil {
		return err
	}
	pcr.Status = PodCertStatus(st)
	return nil
}

// ApplyPodCertDecisionV1beta1 is [ApplyPodCertDecision] for a v1beta1
// object.
func ApplyPodCertDecisionV1beta1(d *podcert.Decision, pcr *certificatesv1beta1.PodCertificateRequest) error {
	req, old := PodCertRequestV1beta1(pcr)
	st := d.Status()
	if err := podcert.CheckStatus(&req, old, st, d.At); err != nil {
		return err
	}
	pcr.Status = PodCertStatusV1beta1(st)
	return nil
}

// podCertStatus reads the fields both versions' statuses share.
func podCertStatus(conds []metav1.Condition, chain string, nb, bra, na *metav1.Time) podcert.Status {
	st := podcert.Status{CertificateChain: chain, NotBefore: goTime(nb), BeginRefreshAt: goTime(bra), NotAfter: goTime(na)}
	if conds != nil {
		st.Conditions = make([]podcert.Condition, len(conds))
		for i, c := range conds {
			st.Conditions[i] = podcert.Condition{Type: c.Type, Status: string(c.Status), ObservedGeneration: c.ObservedGeneration,
				LastTransitionTime: c.LastTransitionTime.Time, Reason: c.Reason, Message: c.Message}
		}
	}
	return st
}

// conditions returns podcert's conditions as the API's.
func conditions(conds []podcert.Condition) []metav1.Condition {
	if conds == nil {
		return nil
	}
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		out[i] = metav1.Condition{Type: c.Type, Status: metav1.ConditionStatus(c.Status), ObservedGeneration: c.ObservedGeneration,
			LastTransitionTime: metav1.NewTime(c.LastTransitionTime), Reason: c.Reason, Message: c.Message}
	}
	return out
}

func goTime(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

func metaTime(t *time.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	v := metav1.NewTime(*t)
	return &v
}
