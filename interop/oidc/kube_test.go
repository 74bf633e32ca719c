package oidc_test

import "k8s.io/kubernetes/pkg/apis/core"

func kubeSA() core.ServiceAccount {
	var s core.ServiceAccount
	s.Namespace, s.Name, s.UID = sa.Namespace, sa.Name, "u-1"
	return s
}
