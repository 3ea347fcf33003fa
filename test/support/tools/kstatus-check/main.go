// kstatus-check computes the kstatus result (Flux's fork of cli-utils, the library Flux, kpt and
// Config Sync use to decide whether a resource is ready) of each Kubernetes object given as JSON on
// standard input: one object, an array, or a List (kubectl get -o json). It prints one JSON line per
// object: {"name":…, "status":"InProgress|Current|Failed|Terminating|Unknown", "message":…}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

type line struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading standard input: %v", err)
	}
	var doc any
	// Integers as int64, as the API machinery's own decoder gives them (kstatus reads generations so).
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		fail("standard input is not JSON: %v", err)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, obj := range objects(doc) {
		u := &unstructured.Unstructured{Object: obj}
		res, err := status.Compute(u)
		if err != nil {
			fail("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		_ = enc.Encode(line{Kind: u.GetKind(), Name: u.GetName(), Status: res.Status.String(), Message: res.Message})
	}
}

func objects(doc any) []map[string]any {
	switch d := doc.(type) {
	case []any:
		var out []map[string]any
		for _, item := range d {
			out = append(out, objects(item)...)
		}
		return out
	case map[string]any:
		if items, ok := d["items"].([]any); ok {
			return objects(items)
		}
		return []map[string]any{d}
	}
	fail("expected a JSON object, an array of objects or a List")
	return nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kstatus-check: "+format+"\n", args...)
	os.Exit(2)
}
