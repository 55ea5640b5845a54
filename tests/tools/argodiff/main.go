// Command argodiff computes what Argo CD's application controller computes for each resource of an
// Application: modified or not, the normalized live state and the predicted live state. It runs Argo CD's own
// code (github.com/argoproj/argo-cd/v3 util/argo/diff and util/settings, github.com/argoproj/gitops-engine
// pkg/diff) the way controller/state.go (CompareAppState) calls it, so that argo-why's tests are judged by the
// code Argo CD runs rather than by our reading of it.
//
// It reads one JSON request on stdin and writes one JSON answer on stdout (see request and answer below). On a bad
// request or a failed diff it writes {"error": "..."} on stdout and exits 1; Argo CD's own logs go to stderr.
// With --stream it answers requests one after another, one line per answer, until stdin ends: an error answers
// that request only (input that is not JSON ends the stream with exit 1). The settings manager of each distinct
// argocd-cm is kept for the stream.
//
// The diff modes, as Argo CD chooses them:
//   - legacy: the three-way diff (last-applied-configuration annotation), the default;
//   - structured-merge: an Application syncing with ServerSideApply=true (WithStructuredMergeDiff);
//   - server-side: ServerSideDiff=true (controller flag or compare-options annotation): a server-side apply
//     dry-run by manager argocd-controller against the API server given by kubeconfig.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/logr"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	kubeutil "github.com/argoproj/argo-cd/v3/util/kube"
	"github.com/argoproj/argo-cd/v3/util/settings"
	"github.com/argoproj/gitops-engine/pkg/diff"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/tracing"
)

// request is the JSON read on stdin.
type request struct {
	// Mode is "legacy" (default), "structured-merge" or "server-side".
	Mode string `json:"mode"`
	// IgnoreDifferences is the Application's spec.ignoreDifferences.
	IgnoreDifferences []v1alpha1.ResourceIgnoreDifferences `json:"ignoreDifferences"`
	// ArgocdCM is the data of the argocd-cm ConfigMap: resource.customizations (whole or split keys),
	// resource.compareoptions (ignoreResourceStatusField, ignoreAggregatedRoles), application.instanceLabelKey,
	// application.resourceTrackingMethod. Read by Argo CD's settings manager, as the controller reads it.
	ArgocdCM map[string]string `json:"argocdCM"`
	// IncludeMutationWebhook mirrors the compare option IncludeMutationWebhook=true (server-side diff only).
	IncludeMutationWebhook bool `json:"includeMutationWebhook"`
	// Kubeconfig is the path of a kubeconfig file: required by server-side diff; when given in the other modes the
	// structured-merge parser is built from the server's OpenAPI document, as the controller's cluster cache does.
	Kubeconfig string `json:"kubeconfig"`
	// Resources pairs each desired object (from Git) with its live object; either may be null.
	Resources []pair `json:"resources"`
}

type pair struct {
	Desired *unstructured.Unstructured `json:"desired"`
	Live    *unstructured.Unstructured `json:"live"`
}

// answer is the JSON written on stdout.
type answer struct {
	Modified  bool             `json:"modified"`
	Resources []resourceAnswer `json:"resources"`
}

type resourceAnswer struct {
	Group          string          `json:"group"`
	Kind           string          `json:"kind"`
	Namespace      string          `json:"namespace"`
	Name           string          `json:"name"`
	Modified       bool            `json:"modified"`
	NormalizedLive json.RawMessage `json:"normalizedLive"`
	PredictedLive  json.RawMessage `json:"predictedLive"`
}

func main() {
	log.SetOutput(os.Stderr)
	log.SetLevel(log.WarnLevel)
	stream := len(os.Args) == 2 && os.Args[1] == "--stream"
	if len(os.Args) > 1 && !stream {
		fmt.Fprintln(os.Stderr, "usage: argodiff [--stream] < request.json")
		os.Exit(2)
	}
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	settingsByCM := map[string]*settings.SettingsManager{}
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if stream && errors.Is(err, io.EOF) {
				return
			}
			// Not JSON: in a stream nothing after it can be found reliably, so this ends it too.
			answerError(fmt.Errorf("reading the request: %w", err))
			os.Exit(1)
		}
		ans, err := decodeAndRun(raw, settingsByCM)
		if err != nil {
			answerError(err)
			if !stream {
				os.Exit(1)
			}
			continue
		}
		if err := writeAnswer(ans); err != nil {
			fmt.Fprintln(os.Stderr, "argodiff: writing the answer:", err)
			os.Exit(1)
		}
		if !stream {
			return
		}
	}
}

func decodeAndRun(raw json.RawMessage, settingsByCM map[string]*settings.SettingsManager) (*answer, error) {
	var req request
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&req); err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	return run(&req, settingsByCM)
}

// writeAnswer writes one answer as one line, flushed (the caller of a stream waits for it).
func writeAnswer(ans any) error {
	b, err := json.Marshal(ans)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(b, '\n'))
	return err
}

func answerError(err error) {
	fmt.Fprintln(os.Stderr, "argodiff:", err)
	_ = writeAnswer(map[string]string{"error": err.Error()})
}

// settingsFor gives Argo CD's settings manager reading this argocd-cm. The controller reads argocd-cm through its
// settings manager (informers on the Argo CD namespace); here it reads the request's data from an in-memory
// clientset. One per distinct argocd-cm, kept for the stream (starting one waits for its informers to sync).
func settingsFor(data map[string]string, cache map[string]*settings.SettingsManager) *settings.SettingsManager {
	key, _ := json.Marshal(data) // map keys are sorted: equal data, equal key
	if mgr, ok := cache[string(key)]; ok {
		return mgr
	}
	const namespace = "argocd"
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: common.ArgoCDConfigMapName, Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
		},
		Data: data,
	}
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(cm), namespace)
	cache[string(key)] = mgr
	return mgr
}

func run(req *request, settingsByCM map[string]*settings.SettingsManager) (*answer, error) {
	settingsMgr := settingsFor(req.ArgocdCM, settingsByCM)
	resourceOverrides, err := settingsMgr.GetResourceOverrides()
	if err != nil {
		return nil, fmt.Errorf("argocd-cm resource customizations: %w", err)
	}
	compareOptions, err := settingsMgr.GetResourceCompareOptions()
	if err != nil {
		return nil, fmt.Errorf("argocd-cm resource.compareoptions: %w", err)
	}
	appLabelKey, err := settingsMgr.GetAppInstanceLabelKey()
	if err != nil {
		return nil, fmt.Errorf("argocd-cm application.instanceLabelKey: %w", err)
	}
	trackingMethod, err := settingsMgr.GetTrackingMethod()
	if err != nil {
		return nil, fmt.Errorf("argocd-cm application.resourceTrackingMethod: %w", err)
	}

	// The same builder calls as controller/state.go CompareAppState.
	builder := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(req.IgnoreDifferences, resourceOverrides, compareOptions.IgnoreAggregatedRoles,
			normalizers.IgnoreNormalizerOpts{}).
		WithTracking(appLabelKey, trackingMethod).
		WithNoCache()
	if req.IncludeMutationWebhook {
		builder.WithIgnoreMutationWebhook(false)
	}
	builder.WithManager(common.ArgoCDSSAManager)

	var config *rest.Config
	if req.Kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", req.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", req.Kubeconfig, err)
		}
		config.Timeout = time.Minute // a hung API server fails the request instead of hanging the tests
		kubectl := &kube.KubectlCmd{Log: logr.Discard(), Tracer: tracing.NopTracer{}}
		openAPISchema, gvkParser, err := kubectl.LoadOpenAPISchema(config)
		if err != nil {
			return nil, fmt.Errorf("loading the API server's OpenAPI schema: %w", err)
		}
		builder.WithGVKParser(gvkParser)
		if req.Mode == "server-side" {
			applier, cleanup, err := kubeutil.ManageServerSideDiffDryRuns(config, openAPISchema, nil)
			if err != nil {
				return nil, fmt.Errorf("server-side diff dry-run applier: %w", err)
			}
			defer cleanup()
			builder.WithServerSideDryRunner(diff.NewK8sServerSideDryRunner(applier))
		}
	}
	switch req.Mode {
	case "", "legacy":
	case "structured-merge":
		builder.WithStructuredMergeDiff(true)
	case "server-side":
		if config == nil {
			return nil, errors.New("mode server-side needs kubeconfig (the API server that runs the dry-run)")
		}
		builder.WithServerSideDiff(true)
	default:
		return nil, fmt.Errorf("unknown mode %q (legacy, structured-merge or server-side)", req.Mode)
	}
	diffConfig, err := builder.Build()
	if err != nil {
		return nil, err
	}

	lives := make([]*unstructured.Unstructured, len(req.Resources))
	targets := make([]*unstructured.Unstructured, len(req.Resources))
	for i, p := range req.Resources {
		if p.Desired == nil && p.Live == nil {
			return nil, fmt.Errorf("resources[%d]: neither desired nor live", i)
		}
		lives[i], targets[i] = p.Live, p.Desired
	}
	results, err := argodiff.StateDiffs(lives, targets, diffConfig)
	if err != nil {
		return nil, err
	}

	out := &answer{Modified: results.Modified, Resources: make([]resourceAnswer, len(req.Resources))}
	for i, p := range req.Resources {
		obj := p.Live
		if obj == nil {
			obj = p.Desired
		}
		gvk := obj.GroupVersionKind()
		r := results.Diffs[i]
		out.Resources[i] = resourceAnswer{
			Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Modified: r.Modified, NormalizedLive: rawJSON(r.NormalizedLive), PredictedLive: rawJSON(r.PredictedLive),
		}
	}
	return out, nil
}

// rawJSON passes gitops-engine's JSON bytes through; an absent side is null.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}
