module github.com/ksa-go/ksa/cmd/ksa

go 1.26.8

require (
	github.com/ksa-go/ksa v0.0.0-00010101000000-000000000000
	github.com/rogpeppe/go-internal v1.14.1
	github.com/spf13/cobra v1.10.2
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
