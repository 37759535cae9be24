// Package app is the reference dispatcher's command line: two clusters'
// kubeconfigs, its name and faults, and the run loop. "jobconform
// dispatcher" calls Run; the multi-cluster runs of issue #31 start it as a
// process beside the clusters, as a dispatcher of one's own would be.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/jobconform/jobconform/controller/dispatch"
)

// Faults are the dispatcher's deliberate bugs, by name.
var Faults = []dispatch.Fault{dispatch.FaultNoTerminating, dispatch.FaultLateStatus, dispatch.FaultTTLToWorker}

// Run runs the dispatcher with the command-line arguments args (without the
// program name) until SIGINT or SIGTERM.
func Run(args []string) error {
	fs := flag.NewFlagSet("dispatcher", flag.ContinueOnError)
	klog.InitFlags(fs)
	manager := fs.String("manager-kubeconfig", "", "kubeconfig of the manager cluster, where the Jobs are created (required)")
	worker := fs.String("worker-kubeconfig", "", "kubeconfig of the worker cluster, where their copies run (required)")
	name := fs.String("name", dispatch.DefaultName, "the spec.managedBy value the dispatcher answers to")
	workers := fs.Int("workers", 5, "Jobs synced in parallel")
	healthz := fs.String("healthz-bind-address", "", "host:port serving /healthz, 200 once both clusters' Jobs are known (\"\": none)")
	faults := map[dispatch.Fault]bool{}
	fs.Func("inject-fault", fmt.Sprintf("break it on purpose, to test a harness (repeatable: %v)", Faults), func(s string) error {
		for _, f := range Faults {
			if string(f) == s {
				faults[f] = true
				return nil
			}
		}
		return fmt.Errorf("unknown fault %q (known: %v)", s, Faults)
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *manager == "" || *worker == "" {
		return errors.New("give --manager-kubeconfig and --worker-kubeconfig: the clusters the dispatcher joins")
	}
	mc, err := client(*manager)
	if err != nil {
		return fmt.Errorf("--manager-kubeconfig: %w", err)
	}
	wc, err := client(*worker)
	if err != nil {
		return fmt.Errorf("--worker-kubeconfig: %w", err)
	}
	mf, wf := informers.NewSharedInformerFactory(mc, 0), informers.NewSharedInformerFactory(wc, 0)
	d, err := dispatch.New(mc, wc, mf, wf, dispatch.Options{Name: *name, Faults: faults})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mf.Start(ctx.Done())
	wf.Start(ctx.Done())
	defer mf.Shutdown()
	defer wf.Shutdown()
	if *healthz != "" {
		ln, err := net.Listen("tcp", *healthz)
		if err != nil {
			return fmt.Errorf("--healthz-bind-address: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if !d.HasSynced() {
				http.Error(w, "informers not synced", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	klog.InfoS("dispatcher running", "name", *name, "faults", faults)
	return d.Run(ctx, *workers)
}

func client(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "jobconform-dispatcher"
	return kubernetes.NewForConfig(cfg)
}
