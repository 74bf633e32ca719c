package ksa_test

import (
	"errors"
	"fmt"

	"github.com/ksa-go/ksa"
)

func ExampleParseUsername() {
	sa, err := ksa.ParseUsername("system:serviceaccount:kube-system:coredns")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sa.Namespace, sa.Name)
	fmt.Println(sa.Groups())

	// Namespaces are lower case, so this is no service account's username.
	_, err = ksa.ParseUsername("system:serviceaccount:Kube-System:coredns")
	fmt.Println(errors.Is(err, ksa.ErrInvalidUsername), errors.Is(err, ksa.ErrInvalidName))
	// Output:
	// kube-system coredns
	// [system:serviceaccounts system:serviceaccounts:kube-system]
	// true true
}

func ExampleErrorText() {
	err := ksa.CheckNamespace("namespace", "Prod")
	fmt.Println(err)
	fmt.Println("--namespace: " + ksa.ErrorText(err))
	fmt.Println(ksa.ErrorText(errors.New("open sa.key: no such file or directory")))
	// Output:
	// ksa: namespace "Prod" must be lower-case letters, digits and '-', starting and ending with a letter or digit
	// --namespace: namespace "Prod" must be lower-case letters, digits and '-', starting and ending with a letter or digit
	// open sa.key: no such file or directory
}
