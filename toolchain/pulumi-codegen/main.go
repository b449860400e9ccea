// Command pulumi-codegen writes the Python or Go SDK of a Pulumi package from its schema:
//
//	pulumi-codegen <schema.json> <python|go> <outdir>
//
// `pulumi package gen-sdk` asks the language host for the SDK, and the hosts built here
// (scripts/setup-languages.sh) are too old to answer; this runs the same generators as the
// Pulumi CLI of toolchain/pulumi-cli, at its version. Like gen-sdk, it empties <outdir> first.
// Types of other packages that the schema references are loaded from their provider plugins.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/pkg/v3/host"
	"github.com/pulumi/pulumi/pkg/v3/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag/colors"
)

const tool = "pulumi-codegen"

func main() {
	if len(os.Args) != 4 || (os.Args[2] != "python" && os.Args[2] != "go") {
		fmt.Fprintln(os.Stderr, "usage: pulumi-codegen <schema.json> <python|go> <outdir>")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-codegen: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, schemaPath, language, outDir string) error {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s is not a package schema: %w", schemaPath, err)
	}

	sink := diag.DefaultSink(os.Stderr, os.Stderr, diag.FormatOptions{Color: colors.Never})
	pluginHost, err := host.New(ctx, sink, sink, nil, nil, nil, nil, nil)
	if err != nil {
		return err
	}
	defer pluginHost.Close()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	pctx, err := plugin.NewContext(ctx, sink, sink, pluginHost, nil, wd, nil, false, nil, nil)
	if err != nil {
		return err
	}
	defer pctx.Close()
	loader := schema.NewPluginLoader(pctx)

	// The validation gen-sdk applies: every problem of the schema at once, naming where it is.
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return fmt.Errorf("%s: %w", schemaPath, errors.Join(diags.Errs()...))
	}

	var files map[string][]byte
	switch language {
	case "python":
		files, err = python.GeneratePackage(tool, pkg, nil, loader)
	case "go":
		files, err = gogen.GeneratePackage(tool, pkg, nil)
	}
	if err != nil {
		return err
	}

	if err := os.RemoveAll(outDir); err != nil {
		return err
	}
	for name, content := range files {
		path := filepath.Join(outDir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "pulumi-codegen: %d files of the %s SDK of %s written to %s\n",
		len(files), language, pkg.Name, outDir)
	return nil
}
