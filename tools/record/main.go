// Command record answers admission and conversion reviews with the pinned Dynamo operator's own
// webhook handlers, in process: it registers them with the operator's internal/webhook/setup
// package on a controller-runtime manager that is never started, and hands each review to the
// webhook server's request multiplexer directly (no TLS, no port, no API server). The handlers'
// look-ups of the cluster are not reachable; the recorded cases do not make any.
//
// It reads one request per line on stdin, {"path": "/validate/...", "review": {AdmissionReview or
// ConversionReview}}, and writes one line per request on stdout: the review the handler answered,
// or {"httpStatus": N, "body": "..."} when it did not answer 200. tools/record/record.py builds the
// reviews from the fixture cases and writes the fixture files from the answers; tools/opdiff/prepare
// builds it inside a copy of the operator's module, beside opdiff, with tools/opdiff/handlers.go
// (the handlers as both programs register them).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

type request struct {
	Path   string          `json:"path"`
	Review json.RawMessage `json:"review"`
}

type failure struct {
	HTTPStatus int    `json:"httpStatus"`
	Body       string `json:"body"`
}

func main() {
	settings := settingsFlags()
	flag.Parse()
	ctrl.SetLogger(logr.Discard())

	// An address nothing listens on: the manager is built, never started, never asked.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 operatorScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{}),
	})
	if err != nil {
		fail("manager", err)
	}
	if err := registerHandlers(mgr, settings); err != nil {
		fail("webhook setup", err)
	}
	server, ok := mgr.GetWebhookServer().(*webhook.DefaultServer)
	if !ok {
		fail("webhook server", fmt.Errorf("not controller-runtime's default server"))
	}
	answerLines(server.WebhookMux())
}

// answerLines answers each request line of stdin with one line on stdout.
func answerLines(mux http.Handler) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := bytes.TrimSpace(in.Bytes())
		if len(line) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			fail("request", err)
		}
		out.Write(serve(mux, req))
		out.WriteByte('\n')
		if err := out.Flush(); err != nil {
			fail("stdout", err)
		}
	}
	if err := in.Err(); err != nil {
		fail("stdin", err)
	}
}

// serve hands one review to the handler registered for its path, as an API server's POST.
func serve(mux http.Handler, req request) []byte {
	httpReq := httptest.NewRequest(http.MethodPost, req.Path, bytes.NewReader(req.Review))
	httpReq.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httpReq)
	body := bytes.TrimSpace(rec.Body.Bytes())
	if rec.Code != http.StatusOK || !json.Valid(body) {
		encoded, err := json.Marshal(failure{HTTPStatus: rec.Code, Body: string(body)})
		if err != nil {
			fail("answer", err)
		}
		return encoded
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		fail("answer", err)
	}
	return compact.Bytes()
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "record: %s: %v\n", what, err)
	os.Exit(1)
}
