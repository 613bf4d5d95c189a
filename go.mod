module github.com/strata-db/strata

go 1.26.8

require github.com/spf13/cobra v1.10.2

require (
	github.com/cockroachdb/datadriven v1.0.3 // indirect
	github.com/holiman/uint256 v1.3.2 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
