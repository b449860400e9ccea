// Command etcd is the etcd server of go.etcd.io/etcd/server/v3, built from the Go module proxy
// because no etcd binary of a suitable version is packaged for this project's machines.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
