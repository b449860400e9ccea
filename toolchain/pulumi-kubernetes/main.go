// Command pulumi-resource-kubernetes serves the Pulumi Kubernetes provider of
// github.com/pulumi/pulumi-kubernetes/provider/v4. The module's own main embeds files generated at
// release time that its module zip lacks, so this one embeds the schema and Terraform mapping that
// scripts/setup-examples.sh copies next to it from the module, stamped with the plugin version.
package main

import (
	_ "embed"
	"encoding/json"
	"log"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema.json
var schema []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	var spec map[string]any
	if err := json.Unmarshal(schema, &spec); err != nil {
		log.Fatalf("embedded schema: %v", err)
	}
	spec["version"] = version.Version
	stamped, err := json.Marshal(spec)
	if err != nil {
		log.Fatalf("embedded schema: %v", err)
	}
	provider.Serve("kubernetes", version.Version, stamped, terraformMapping)
}
