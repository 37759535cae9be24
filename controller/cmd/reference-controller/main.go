// Command reference-controller runs jobconform's reference Job controller
// against a cluster: as an external controller for the Jobs whose
// spec.managedBy names it, or (--unmanaged) as the cluster's only Job
// controller when kube-controller-manager runs with --controllers=-job.
package main

import (
	"fmt"
	"os"

	"github.com/jobconform/jobconform/controller/cmd/reference-controller/app"
)

func main() {
	if err := app.Run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "reference-controller:", err)
		os.Exit(1)
	}
}
