// Command opdiff serves the pinned Dynamo operator's own admission and conversion handlers, as
// the operator registers them (its webhook setup package on a controller-runtime manager), and
// nothing else: no controllers, no leader election, no metrics. tools/opdiff/prepare builds it
// inside a copy of the operator's module, since the setup package is internal to that module.
//
// The differential test (tools/opdiff/drive.py) sends the same reviews to this server and to
// dynamo-webhook and compares the answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func main() {
	port := flag.Int("port", 9643, "HTTPS port of the webhook server")
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	settings := settingsFlags()
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))

	// --kubeconfig is controller-runtime's own flag: the API server the handlers read from.
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		fail("kubeconfig", err)
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 operatorScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: "127.0.0.1", Port: *port, CertDir: *certDir,
		}),
	})
	if err != nil {
		fail("manager", err)
	}
	if err := registerHandlers(mgr, settings); err != nil {
		fail("webhook setup", err)
	}
	fmt.Fprintf(os.Stderr, "opdiff: serving the operator's webhooks on https://127.0.0.1:%d\n", *port)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil && err != context.Canceled {
		fail("manager", err)
	}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "opdiff: %s: %v\n", what, err)
	os.Exit(1)
}
