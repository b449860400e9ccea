// Command checkpoint-cost measures what one checkpoint write of the Pulumi engine costs for the
// resources of a stack: it runs the steps the engine's snapshot manager and the file backend take
// after every step of a deployment (normalize URN references, serialize the snapshot, verify its
// integrity, encode the checkpoint as JSON twice, MD5) on a checkpoint file, and prints per
// resource the bytes written and the heap allocations made, as JSON. Allocation counts do not
// vary from run to run, unlike wall time on a shared machine.
//
// Usage: checkpoint-cost <checkpoint.json>... (the file backend's .pulumi/stacks/<project>/<stack>.json)
package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"github.com/pulumi/pulumi/pkg/v3/resource/stack"
	"github.com/pulumi/pulumi/pkg/v3/resource/stack/snapshot"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// compact is the file backend's JSON encoding of a checkpoint.
type compact struct{}

func (compact) Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

func (compact) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// cost loads a checkpoint file and measures one write of it as the engine makes it after a step.
func cost(ctx context.Context, file string) (resources, written int, mallocs uint64, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, 0, err
	}
	var v struct {
		Checkpoint apitype.CheckpointV3 `json:"checkpoint"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, 0, 0, err
	}
	if v.Checkpoint.Latest == nil {
		return 0, 0, 0, fmt.Errorf("no deployment in the checkpoint")
	}
	// No secrets in a benchmark's state: no secrets provider is needed to read it.
	v.Checkpoint.Latest.SecretsProviders = nil
	snap, err := stack.DeserializeCheckpoint(ctx, nil, &v.Checkpoint)
	if err != nil {
		return 0, 0, 0, err
	}
	write := func() (int, error) {
		s, err := snap.NormalizeURNReferences()
		if err != nil {
			return 0, err
		}
		dep, version, features, err := stack.SerializeDeploymentWithMetadata(ctx, s, false)
		if err != nil {
			return 0, err
		}
		_ = snapshot.VerifyIntegrity(dep)
		chk, err := stack.DeploymentV3ToCheckpointWithMarshaler(compact{}, "organization/p/s", dep, version, features)
		if err != nil {
			return 0, err
		}
		out, err := compact{}.Marshal(chk)
		if err != nil {
			return 0, err
		}
		_ = md5.Sum(out)
		return len(out), nil
	}
	// The first write builds what the engine keeps between writes; the second is measured.
	if _, err := write(); err != nil {
		return 0, 0, 0, err
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	written, err = write()
	runtime.ReadMemStats(&after)
	return len(snap.Resources), written, after.Mallocs - before.Mallocs, err
}

func main() {
	type result struct {
		File      string  `json:"file"`
		Resources int     `json:"resources"`
		Bytes     float64 `json:"bytesPerResource"`
		Mallocs   float64 `json:"mallocsPerResource"`
	}
	results := []result{}
	for _, file := range os.Args[1:] {
		resources, written, mallocs, err := cost(context.Background(), file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "checkpoint-cost: %s: %v\n", file, err)
			os.Exit(1)
		}
		n := float64(resources)
		results = append(results, result{file, resources, float64(written) / n, float64(mallocs) / n})
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		os.Exit(1)
	}
}
