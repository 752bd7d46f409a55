// The operator's webhook handlers as tools/opdiff/main.go and tools/record/main.go both register
// them: the scheme, the settings flags and the operator's own internal/webhook/setup package.
// tools/opdiff/prepare copies this file beside each of the two programs.
package main

import (
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/config/v1alpha1"
	nvidiacomv1alpha1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1alpha1"
	nvidiacomv1beta1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1beta1"
	commoncontroller "github.com/ai-dynamo/dynamo/deploy/operator/internal/controller_common"
	"github.com/ai-dynamo/dynamo/deploy/operator/internal/features"
	webhooksetup "github.com/ai-dynamo/dynamo/deploy/operator/internal/webhook/setup"
	gaiev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// handlerSettings are the flags that shape the operator's answers.
type handlerSettings struct {
	grove, checkpoint, gpuDiscovery bool
	principal, version, dgdrImage   string
}

// settingsFlags declares the settings on the command line (parse it before reading them).
func settingsFlags() *handlerSettings {
	s := &handlerSettings{}
	flag.BoolVar(&s.grove, "grove", false, "feature gate grove")
	flag.BoolVar(&s.checkpoint, "checkpoint", false, "feature gate checkpoint")
	flag.BoolVar(&s.gpuDiscovery, "gpu-discovery", true, "feature gate gpuDiscovery")
	flag.StringVar(&s.principal, "operator-principal", "", "the operator's service account user name")
	flag.StringVar(&s.version, "operator-version", "0.1.0", "operator version (semver)")
	flag.StringVar(&s.dgdrImage, "dgdr-default-image", "", "default DGDR profiler image")
	return s
}

// operatorScheme holds every type the handlers decode.
func operatorScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(nvidiacomv1alpha1.AddToScheme(scheme))
	utilruntime.Must(nvidiacomv1beta1.AddToScheme(scheme))
	utilruntime.Must(gaiev1.Install(scheme))
	return scheme
}

// registerHandlers registers the operator's admission and conversion handlers on mgr's webhook server.
func registerHandlers(mgr ctrl.Manager, s *handlerSettings) error {
	gates := features.Gates{Grove: s.grove, Checkpoint: s.checkpoint, GPUDiscovery: s.gpuDiscovery}
	return webhooksetup.Setup(mgr, webhooksetup.Options{
		Config:            &configv1alpha1.OperatorConfiguration{},
		RuntimeConfig:     &commoncontroller.RuntimeConfig{Gate: gates},
		OperatorVersion:   s.version,
		DGDRDefaultImage:  s.dgdrImage,
		OperatorPrincipal: s.principal,
		Gate:              gates,
	})
}
