// Package app is the reference controller's command line: flags, client,
// metrics endpoint and run loop. The reference-controller command and
// "jobconform reference-controller" (so an installed jobconform needs no
// checkout to run it) both call Run.
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/jobconform/jobconform/controller"
)

// Run runs the controller with the command-line arguments args (without the
// program name) until SIGINT or SIGTERM.
func Run(args []string) error {
	fs := flag.NewFlagSet("reference-controller", flag.ContinueOnError)
	klog.InitFlags(fs)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default: $KUBECONFIG, else in-cluster)")
	name := fs.String("name", controller.DefaultName, "the spec.managedBy value this controller reconciles")
	unmanaged := fs.Bool("unmanaged", false, "also reconcile Jobs without spec.managedBy (only when the built-in Job controller is disabled)")
	metricsAddr := fs.String("metrics-bind-address", "", "serve /metrics and /healthz here, e.g. 127.0.0.1:8080 (empty: off)")
	workers := fs.Int("workers", 5, "Jobs synced in parallel")
	maxPods := fs.Int("max-pods-per-sync", 0, "pods one sync creates or deletes at most (default upstream's 500; a small value slows the controller on purpose)")
	gates := controller.NewGates()
	fs.Func("feature-gates", "the controller's own gates, e.g. JobPodReplacementPolicy=false", func(s string) error {
		return gates.Set(s)
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *unmanaged && *name == controller.BuiltInName {
		return errors.New("--name must not be the built-in controller's name")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig}, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w (give --kubeconfig or set KUBECONFIG)", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "jobconform-reference-controller"
	// Protobuf, as kube-controller-manager speaks: cheaper for the apiserver
	// to serve a Job's pods to, and falling back to JSON where it must.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := controller.NewMetrics(reg)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := controller.New(client, factory, metrics, controller.Options{Name: *name, Unmanaged: *unmanaged, Gates: gates, Workers: *workers, MaxPodsPerSync: *maxPods})
	if err != nil {
		return err
	}
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("metrics address: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if !c.Running() {
				http.Error(w, "caches not synced", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "ok")
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		klog.Info("serving metrics", "address", ln.Addr().String())
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	return c.Run(ctx)
}
