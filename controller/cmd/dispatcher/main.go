// Command dispatcher runs jobconform's reference dispatcher (controller/dispatch)
// between a manager and a worker cluster: the process the harness's
// multi-cluster runs start, as they would a dispatcher of one's own.
// "jobconform dispatcher" is the same command.
package main

import (
	"fmt"
	"os"

	"github.com/jobconform/jobconform/controller/dispatch/app"
)

func main() {
	if err := app.Run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(1)
	}
}
