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

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/config/v1alpha1"
	nvidiacomv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1alpha1"
	nvidiacomv1beta1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1beta1"
	commoncontroller "github.com/ai-dynamo/dynamo/deploy/operator/internal/controller_common"
	"github.com/ai-dynamo/dynamo/deploy/operator/internal/features"
	webhooksetup "github.com/ai-dynamo/dynamo/deploy/operator/internal/webhook/setup"
	gaiev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

func main() {
	port := flag.Int("port", 9643, "HTTPS port of the webhook server")
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	grove := flag.Bool("grove", false, "feature gate grove")
	checkpoint := flag.Bool("checkpoint", false, "feature gate checkpoint")
	gpuDiscovery := flag.Bool("gpu-discovery", true, "feature gate gpuDiscovery")
	principal := flag.String("operator-principal", "", "the operator's service account user name")
	version := flag.String("operator-version", "0.1.0", "operator version (semver)")
	dgdrImage := flag.String("dgdr-default-image", "", "default DGDR profiler image")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(nvidiacomv1alpha1.AddToScheme(scheme))
	utilruntime.Must(nvidiacomv1beta1.AddToScheme(scheme))
	utilruntime.Must(gaiev1.Install(scheme))

	// --kubeconfig is controller-runtime's own flag: the API server the handlers read from.
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		fail("kubeconfig", err)
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: "127.0.0.1", Port: *port, CertDir: *certDir,
		}),
	})
	if err != nil {
		fail("manager", err)
	}
	gates := features.Gates{Grove: *grove, Checkpoint: *checkpoint, GPUDiscovery: *gpuDiscovery}
	err = webhooksetup.Setup(mgr, webhooksetup.Options{
		Config:            &configv1alpha1.OperatorConfiguration{},
		RuntimeConfig:     &commoncontroller.RuntimeConfig{Gate: gates},
		OperatorVersion:   *version,
		DGDRDefaultImage:  *dgdrImage,
		OperatorPrincipal: *principal,
		Gate:              gates,
	})
	if err != nil {
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
