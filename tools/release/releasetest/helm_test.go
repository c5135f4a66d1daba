package releasetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"
)

var chartDir = filepath.Join(repoRoot, "deploy", "helm", "tollgate")

// multiValues: three replicas on PostgreSQL (URL from the operator's
// Secret) and Redis (URL as a value), a provider key from a Secret, and
// every optional object.
var multiValues = map[string]any{
	"replicaCount": 3,
	"image":        map[string]any{"repository": "registry.example.com/tollgate", "tag": version},
	"database":     map[string]any{"type": "postgres", "existingSecret": "tollgate-db", "existingSecretKey": "url"},
	"redis":        map[string]any{"enabled": true, "url": "redis://redis:6379/0"},
	"masterKey":    map[string]any{"existingSecret": "tollgate-master"},
	"secretEnv":    map[string]any{"OPENAI_API_KEY": map[string]any{"secretName": "llm-keys", "key": "openai"}},
	"config": map[string]any{
		"providers": []any{map[string]any{"name": "openai", "type": "openai", "api_key": "${OPENAI_API_KEY}"}},
		"models":    []any{map[string]any{"name": "gpt-6-sol", "targets": []any{map[string]any{"provider": "openai", "model": "gpt-6-sol"}}}},
	},
	"metrics":       map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
	"networkPolicy": map[string]any{"enabled": true},
	"ingress":       map[string]any{"enabled": true, "className": "nginx"},
	"autoscaling":   map[string]any{"enabled": true},
}

// rendered is the chart's objects, decoded strictly, by kind and name.
type rendered struct {
	objects map[string]runtime.Object // "Kind/name"
	monitor map[string]any            // the ServiceMonitor, not a Kubernetes API type
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, autoscalingv2.AddToScheme, networkingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

func render(values map[string]any) (*rendered, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(chrt, values, chartutil.ReleaseOptions{Name: "gw", Namespace: "llm", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, err
	}
	// Strict: an unknown or duplicate field is an error, not dropped.
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	r := &rendered{objects: map[string]runtime.Object{}}
	for name, text := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for doc := range strings.SplitSeq(text, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var meta struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				return nil, fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			if meta.Kind == "ServiceMonitor" {
				if err := yaml.UnmarshalStrict([]byte(doc), &r.monitor); err != nil {
					return nil, err
				}
				continue
			}
			obj, _, err := decoder.Decode([]byte(doc), nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			key := meta.Kind + "/" + meta.Metadata.Name
			if _, dup := r.objects[key]; dup {
				return nil, fmt.Errorf("%s rendered twice", key)
			}
			r.objects[key] = obj
		}
	}
	return r, nil
}

func TestHelmLint(t *testing.T) {
	for name, values := range map[string]map[string]any{"default": nil, "multi-replica": multiValues} {
		linter := lint.All(chartDir, values, "llm", false)
		for _, m := range linter.Messages {
			t.Logf("%s: %s", name, m)
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", name, m)
			}
		}
	}
}

// TestHelmDefault: one replica on SQLite with its volume, the security
// context, probes, preStop and grace period, and the master key from the
// chart's Secret.
func TestHelmDefault(t *testing.T) {
	r, err := render(nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for k := range r.objects {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	want := []string{"ConfigMap/gw-tollgate", "Deployment/gw-tollgate", "PersistentVolumeClaim/gw-tollgate", "Secret/gw-tollgate", "Service/gw-tollgate", "ServiceAccount/gw-tollgate"}
	if !slices.Equal(kinds, want) {
		t.Errorf("objects %v, want %v", kinds, want)
	}
	d := r.objects["Deployment/gw-tollgate"].(*appsv1.Deployment)
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %d, strategy %q", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	c := checkPod(t, r, d.Spec.Template.Spec, map[string]bool{"Secret/gw-tollgate": true})
	if c.Image != "tollgate:0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	vol := d.Spec.Template.Spec.Volumes[slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "data" })]
	if vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "gw-tollgate" {
		t.Errorf("data volume %+v", vol)
	}
	cfg := checkConfigMap(t, r, "ConfigMap/gw-tollgate", map[string]string{"TOLLGATE_MASTER_KEY": "0123456789abcdef0123456789abcdef"})
	if !strings.Contains(cfg, "url: sqlite:///data/tollgate.db") {
		t.Errorf("config:\n%s", cfg)
	}
	if s := r.objects["Secret/gw-tollgate"].(*corev1.Secret); len(s.StringData["master-key"]) < 32 {
		t.Errorf("the generated master key is %d characters", len(s.StringData["master-key"]))
	}
}

// TestHelmMultiReplica: PostgreSQL and Redis from Secrets, a PDB, the HPA,
// the ServiceMonitor with the master key, NetworkPolicy, Ingress and the
// migration Job as a pre-install and pre-upgrade hook.
func TestHelmMultiReplica(t *testing.T) {
	r, err := render(multiValues)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"PodDisruptionBudget/gw-tollgate", "HorizontalPodAutoscaler/gw-tollgate", "NetworkPolicy/gw-tollgate",
		"Ingress/gw-tollgate", "Job/gw-tollgate-migrate", "ConfigMap/gw-tollgate-migrate", "Secret/gw-tollgate-migrate", "Secret/gw-tollgate"} {
		if r.objects[k] == nil {
			t.Errorf("no %s", k)
		}
	}
	if r.objects["PersistentVolumeClaim/gw-tollgate"] != nil {
		t.Error("a PersistentVolumeClaim on PostgreSQL")
	}
	d := r.objects["Deployment/gw-tollgate"].(*appsv1.Deployment)
	if d.Spec.Replicas != nil {
		t.Errorf("replicas %d set with the HPA on", *d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		t.Error("Recreate with several replicas")
	}
	external := map[string]bool{"Secret/tollgate-db": true, "Secret/tollgate-master": true, "Secret/llm-keys": true, "Secret/gw-tollgate": true}
	c := checkPod(t, r, d.Spec.Template.Spec, external)
	for _, name := range []string{"TOLLGATE_DATABASE_URL", "TOLLGATE_REDIS_URL", "OPENAI_API_KEY"} {
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
			return e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
		}) {
			t.Errorf("%s does not come from a Secret", name)
		}
	}
	checkConfigMap(t, r, "ConfigMap/gw-tollgate", map[string]string{"TOLLGATE_MASTER_KEY": "0123456789abcdef0123456789abcdef",
		"TOLLGATE_DATABASE_URL": "postgres://u:p@db/tollgate", "TOLLGATE_REDIS_URL": "redis://redis:6379/0", "OPENAI_API_KEY": "sk-x"})

	job := r.objects["Job/gw-tollgate-migrate"].(*batchv1.Job)
	if job.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" {
		t.Errorf("Job hook %q", job.Annotations["helm.sh/hook"])
	}
	for _, k := range []string{"ConfigMap/gw-tollgate-migrate", "Secret/gw-tollgate-migrate"} {
		o := r.objects[k].(interface{ GetAnnotations() map[string]string })
		if o.GetAnnotations()["helm.sh/hook"] != "pre-install,pre-upgrade" || o.GetAnnotations()["helm.sh/hook-weight"] >= job.Annotations["helm.sh/hook-weight"] && o.GetAnnotations()["helm.sh/hook-weight"] != "-10" {
			t.Errorf("%s is not a hook made before the Job: %v", k, o.GetAnnotations())
		}
	}
	jc := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(jc.Command, []string{"/usr/bin/tollgate", "migrate", "--config", "/etc/tollgate/tollgate.yaml"}) {
		t.Errorf("Job command %q", jc.Command)
	}
	checkSecretRefs(t, r, jc.Env, map[string]bool{"Secret/tollgate-db": true, "Secret/llm-keys": true, "Secret/gw-tollgate-migrate": true})

	ep := r.monitor["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	if cred := ep["authorization"].(map[string]any)["credentials"].(map[string]any); cred["name"] != "tollgate-master" || ep["port"] != "metrics" {
		t.Errorf("ServiceMonitor endpoint %v", ep)
	}
}

// TestHelmRefuses: values that cannot work fail the render, saying why.
func TestHelmRefuses(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"replicaCount": 2}, "needs database.type=postgres"},
		{map[string]any{"autoscaling": map[string]any{"enabled": true}}, "needs database.type=postgres"},
		{map[string]any{"replicaCount": 2, "database": map[string]any{"type": "postgres", "url": "postgres://db/t"}}, "needs redis.enabled=true"},
		{map[string]any{"database": map[string]any{"type": "postgres"}}, "needs database.url or database.existingSecret"},
		{map[string]any{"database": map[string]any{"type": "mysql"}}, "must be sqlite or postgres"},
		{map[string]any{"terminationGracePeriodSeconds": 30}, "must be longer than drainTimeoutSeconds"},
	} {
		_, err := render(tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.values, err, tc.want)
		}
	}
}

// checkPod checks the gateway container of a pod spec and returns it.
func checkPod(t *testing.T, r *rendered, spec corev1.PodSpec, secrets map[string]bool) corev1.Container {
	t.Helper()
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.SeccompProfile == nil {
		t.Errorf("pod securityContext %+v", psc)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("container securityContext %+v", sc)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "http" {
		t.Errorf("livenessProbe %+v", p)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readinessProbe %+v", p)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" && p.ContainerPort == 8080 }) {
		t.Errorf("ports %+v", c.Ports)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds <= 0 {
		t.Fatalf("preStop %+v", c.Lifecycle)
	}
	if !slices.Equal(c.Args, []string{"--config", "/etc/tollgate/tollgate.yaml"}) {
		t.Errorf("args %q", c.Args)
	}
	// The grace period covers the preStop pause and the drain.
	cfg := r.objects["ConfigMap/gw-tollgate"].(*corev1.ConfigMap).Data["tollgate.yaml"]
	var parsed struct {
		Server struct {
			DrainTimeout string `json:"drain_timeout"`
		}
	}
	if err := yaml.Unmarshal([]byte(cfg), &parsed); err != nil {
		t.Fatal(err)
	}
	var drain int64
	if _, err := fmt.Sscanf(parsed.Server.DrainTimeout, "%ds", &drain); err != nil {
		t.Fatalf("server.drain_timeout %q", parsed.Server.DrainTimeout)
	}
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g <= drain+c.Lifecycle.PreStop.Sleep.Seconds {
		t.Errorf("terminationGracePeriodSeconds %v, drain_timeout %ds, preStop %ds", g, drain, c.Lifecycle.PreStop.Sleep.Seconds)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "TOLLGATE_MASTER_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}) {
		t.Error("TOLLGATE_MASTER_KEY does not come from a Secret")
	}
	checkSecretRefs(t, r, c.Env, secrets)
	return c
}

// checkSecretRefs: no secret is a plain value, and every reference names
// a Secret the chart makes with that key, or one of the operator's.
func checkSecretRefs(t *testing.T, r *rendered, env []corev1.EnvVar, allowed map[string]bool) {
	t.Helper()
	for _, e := range env {
		if e.Value != "" && (strings.Contains(e.Name, "KEY") || strings.Contains(e.Name, "URL")) {
			t.Errorf("%s is a plain value", e.Name)
		}
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		k := "Secret/" + ref.Name
		if !allowed[k] {
			t.Errorf("%s from %s, not an expected Secret", e.Name, k)
		}
		if s, ok := r.objects[k].(*corev1.Secret); ok {
			if _, has := s.StringData[ref.Key]; !has {
				t.Errorf("%s from %s key %s, which it does not hold", e.Name, k, ref.Key)
			}
		}
	}
}

// checkConfigMap runs the released gateway's check-config on the
// rendered tollgate.yaml with env set, and returns the file.
func checkConfigMap(t *testing.T, r *rendered, name string, env map[string]string) string {
	t.Helper()
	cm, ok := r.objects[name].(*corev1.ConfigMap)
	if !ok {
		t.Fatalf("no %s", name)
	}
	cfg := cm.Data["tollgate.yaml"]
	checkWithGateway(t, cfg, env)
	return cfg
}

// checkWithGateway runs tollgate check-config on a configuration text:
// the released linux/amd64 binary, or go run of the source with -short.
func checkWithGateway(t *testing.T, cfg string, env map[string]string) {
	t.Helper()
	bin := gatewayBinary(t)
	if bin == "" {
		return
	}
	p := filepath.Join(t.TempDir(), "tollgate.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check-config", "--config", p)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("check-config: %v\n%s\n%s", err, out, cfg)
	}
}
