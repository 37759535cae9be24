package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/kube"
	"github.com/jobconform/jobconform/suites/recorder"
)

// demo is the main job until the conformance suites exist: a local cluster,
// the KEP-3939 scenario against the built-in controller (a pod that needs 5s
// after SIGTERM is deleted under podReplacementPolicy Failed), its timeline on
// the terminal and in $ARTIFACTS, and a verdict.
func demo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	cfg := clusterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Progress = os.Stderr
	artifacts := os.Getenv("ARTIFACTS")
	if artifacts == "" {
		artifacts = "_artifacts"
	}
	c, err := local.Start(ctx, *cfg)
	if err != nil {
		return err
	}
	defer c.Stop()

	client := c.Client()
	ns, err := kube.CreateNamespace(ctx, client, "kep3939")
	if err != nil {
		return err
	}
	rec, err := recorder.Start(ctx, client, ns)
	if err != nil {
		return err
	}
	defer rec.Stop()

	fmt.Fprintln(os.Stderr, "scenario: podReplacementPolicy=Failed, one pod that needs 5s after SIGTERM, deleted while running")
	job := kube.NewJob("kep3939", 1, pods.RunForever().TrapSIGTERM(5*time.Second, 143))
	job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return err
	}
	first, err := rec.WaitFor(ctx, time.Minute, "a running pod", func(e recorder.Entry) bool {
		return e.Kind == "Pod" && e.Pod() != nil && e.Pod().Status.Phase == corev1.PodRunning
	})
	if err != nil {
		return err
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	failed, err := rec.WaitFor(ctx, time.Minute, "the deleted pod to reach Failed", func(e recorder.Entry) bool {
		return e.Kind == "Pod" && e.Name == first.Name && e.Pod().Status.Phase == corev1.PodFailed
	})
	if err != nil {
		return err
	}
	repl, err := rec.WaitFor(ctx, time.Minute, "a replacement pod", func(e recorder.Entry) bool {
		return e.Kind == "Pod" && e.Name != first.Name && e.Type == recorder.Added
	})
	if err != nil {
		return err
	}
	sawTerminating := false
	for _, e := range rec.Of("Job") {
		s := e.Job().Status
		if e.Seq < failed.Seq && ptr.Deref(s.Terminating, 0) == 1 && s.Active == 0 {
			sawTerminating = true
		}
	}

	fmt.Println(rec.Dump("Job", "Pod"))
	if err := writeTimeline(filepath.Join(artifacts, "demo-kep3939.json"), rec); err != nil {
		return err
	}
	ok := repl.Seq > failed.Seq && sawTerminating
	fmt.Printf("verdict (built-in controller, Kubernetes %s): terminating=1 active=0 while the pod terminated: %v; replacement only after phase Failed: %v\n",
		c.Version(), sawTerminating, repl.Seq > failed.Seq)
	if !ok {
		return fmt.Errorf("the built-in controller did not keep podReplacementPolicy=Failed")
	}
	fmt.Printf("PASS — timeline written to %s\n", filepath.Join(artifacts, "demo-kep3939.json"))
	return nil
}

func writeTimeline(path string, rec *recorder.Recorder) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	type line struct {
		Time   time.Time `json:"time"`
		Type   string    `json:"type"`
		Kind   string    `json:"kind"`
		Name   string    `json:"name"`
		Object any       `json:"object"`
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, e := range rec.Entries() {
		if err := enc.Encode(line{e.Time, string(e.Type), e.Kind, e.Name, e.Object}); err != nil {
			return err
		}
	}
	return nil
}
