// Command notify renders and sends Argo CD notifications with Argo CD's own code: the notifications-engine
// (github.com/argoproj/notifications-engine, the version argo-cd requires: ParseConfig, NewAPI, the trigger,
// template and webhook services) with the variables and expression helpers Argo CD's notifications controller
// registers (argo-cd util/notification/settings: the context of the ConfigMap, the secrets, and the helpers of
// util/notification/expression: time, strings, sprig-free repo). So the template shipped in
// deploy/argocd-notifications is judged by the code that renders and sends it in a cluster.
//
// It reads one JSON request on stdin and writes one JSON answer on stdout:
//
//	request: {"configMap": {argocd-notifications-cm data}, "secret": {argocd-notifications-secret data, as strings},
//	          "app": {the Application}, "templates": ["name", ...] (optional)}
//	answer:  {"triggers": {"trigger": [{"triggered": bool, "templates": [...]}]},
//	          "notifications": [{"service", "recipient", "template", "method", "path", "body"}], "sent": n}
//
// Destinations are the ConfigMap's global subscriptions, as the controller reads them. Without "templates" each
// subscribed trigger is run and its templates are sent when it fires (the controller; oncePer state aside); with
// "templates" those templates are sent to every subscribed destination whatever the triggers say (what
// `argocd admin notifications template notify` does). A failed send is an error: {"error": "..."} and exit 1.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/templates"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	notifsettings "github.com/argoproj/argo-cd/v3/util/notification/settings"
)

type request struct {
	ConfigMap map[string]string `json:"configMap"`
	Secret    map[string]string `json:"secret"`
	App       map[string]any    `json:"app"`
	Templates []string          `json:"templates"`
}

type triggerResult struct {
	Triggered bool     `json:"triggered"`
	Templates []string `json:"templates"`
}

type notification struct {
	Service   string `json:"service"`
	Recipient string `json:"recipient"`
	Template  string `json:"template"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Body      string `json:"body"`
}

type answer struct {
	Triggers      map[string][]triggerResult `json:"triggers"`
	Notifications []notification             `json:"notifications"`
	Sent          int                        `json:"sent"`
}

const (
	namespace     = "argocd"
	configMapName = "argocd-notifications-cm"
	secretName    = "argocd-notifications-secret"
)

func main() {
	var req request
	dec := json.NewDecoder(os.Stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(fmt.Errorf("reading the request: %w", err))
	}
	ans, err := run(&req)
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(ans); err != nil {
		fmt.Fprintln(os.Stderr, "notify: writing the answer:", err)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "notify:", err)
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
	os.Exit(1)
}

func run(req *request) (*answer, error) {
	if req.App == nil {
		return nil, fmt.Errorf("the request has no app")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName, Namespace: namespace}, Data: req.ConfigMap}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace}, Data: map[string][]byte{}}
	for k, v := range req.Secret {
		secret.Data[k] = []byte(v)
	}
	// What the notifications-engine factory does for the controller (getApiFromConfigmapAndSecret), with Argo CD's
	// factory settings (argo-cd cmd/argocd-notification, selfServiceNotificationEnabled false). The repo helper's
	// Argo CD service is nil: it is only called by templates using repo.* functions, and ours uses none.
	cfg, err := api.ParseConfig(cm, secret)
	if err != nil {
		return nil, fmt.Errorf("argocd-notifications-cm: %w", err)
	}
	factorySettings := notifsettings.GetFactorySettings(nil, secretName, configMapName, false)
	getVars, err := factorySettings.InitGetVars(cfg, cm, secret)
	if err != nil {
		return nil, fmt.Errorf("argocd-notifications-cm context: %w", err)
	}
	notifier, err := api.NewAPI(*cfg, getVars)
	if err != nil {
		return nil, fmt.Errorf("notifications services: %w", err)
	}
	templater, err := templates.NewService(cfg.Templates)
	if err != nil {
		return nil, fmt.Errorf("notifications templates: %w", err)
	}

	app := &unstructured.Unstructured{Object: req.App}
	destinations := cfg.GetGlobalDestinations(app.GetLabels())
	triggerNames := make([]string, 0, len(destinations))
	for t := range destinations {
		triggerNames = append(triggerNames, t)
	}
	sort.Strings(triggerNames)

	ans := &answer{Triggers: map[string][]triggerResult{}, Notifications: []notification{}}
	for _, trigger := range triggerNames {
		results, err := notifier.RunTrigger(trigger, req.App)
		if err != nil {
			return nil, fmt.Errorf("trigger %s: %w", trigger, err)
		}
		for _, r := range results {
			ans.Triggers[trigger] = append(ans.Triggers[trigger], triggerResult{Triggered: r.Triggered, Templates: r.Templates})
			if req.Templates != nil || !r.Triggered {
				continue
			}
			for _, dest := range destinations[trigger] {
				if err := send(notifier, templater, getVars, req.App, r.Templates, dest, ans); err != nil {
					return nil, err
				}
			}
		}
	}
	if req.Templates != nil {
		for _, trigger := range triggerNames {
			for _, dest := range destinations[trigger] {
				if err := send(notifier, templater, getVars, req.App, req.Templates, dest, ans); err != nil {
					return nil, err
				}
			}
		}
	}
	return ans, nil
}

// send records what each template renders to for dest (the variables exactly as api.Send builds them) and sends
// it with api.Send: the notifications-engine's own template and webhook services.
func send(notifier api.API, templater templates.Service, getVars api.GetVars, app map[string]any, names []string,
	dest services.Destination, ans *answer) error {
	for _, name := range names {
		vars := map[string]any{}
		for k, v := range getVars(app, dest) {
			vars[k] = v
		}
		vars["serviceType"] = dest.Service
		vars["recipient"] = dest.Recipient
		rendered, err := templater.FormatNotification(vars, name)
		if err != nil {
			return fmt.Errorf("template %s: %w", name, err)
		}
		n := notification{Service: dest.Service, Recipient: dest.Recipient, Template: name}
		if wh, ok := rendered.Webhook[dest.Service]; ok {
			n.Method, n.Path, n.Body = wh.Method, wh.Path, wh.Body
		} else {
			n.Body = rendered.Message
		}
		ans.Notifications = append(ans.Notifications, n)
		if err := notifier.Send(app, []string{name}, dest); err != nil {
			return fmt.Errorf("sending template %s to %s: %w", name, dest.Service, err)
		}
		ans.Sent++
	}
	return nil
}
