package all_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all"
	"github.com/spf13/pflag"
)

// boundedMethods are the methods that bound degrees at node level, with
// the modes each offers.
var boundedMethods = map[string][]degree.Mode{
	"gap":     {degree.Public, degree.Sample},
	"progap":  {degree.Public, degree.Sample},
	"caribou": {degree.Public},
	"asgl":    {degree.Public, degree.Sample, degree.None},
	"sage":    {degree.Public, degree.Sample, degree.None},
}

// TestOneDegreeBoundVocabulary: every method that bounds degrees has the
// same flag pair (--max-degree, --degree-bound) with the same help, and no
// other method has either flag; each accepts the modes it offers (and
// ASGL's former "cap" as sample) and refuses the others.
func TestOneDegreeBoundVocabulary(t *testing.T) {
	ref := pflag.NewFlagSet("degree", pflag.ContinueOnError)
	methods.BindConfig(ref, &struct{ degree.Flags }{degree.DefaultFlags(1)})
	for _, name := range methods.Names() {
		m, err := methods.New(name)
		if err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		methods.BindConfig(fs, m.Config())
		offered, bounds := boundedMethods[name]
		for _, f := range []string{"max-degree", "degree-bound"} {
			got := fs.Lookup(f)
			if (got != nil) != bounds {
				t.Errorf("%s: has --%s = %v, want %v", name, f, got != nil, bounds)
				continue
			}
			if got != nil && got.Usage != ref.Lookup(f).Usage {
				t.Errorf("%s --%s: help %q, want the shared %q", name, f, got.Usage, ref.Lookup(f).Usage)
			}
		}
		if !bounds {
			continue
		}
		for _, mode := range []string{"public", "sample", "none", "cap"} {
			mm, _ := methods.New(name)
			if err := methods.SetConfig(mm.Config(), "degree-bound="+mode); err != nil {
				t.Fatal(err)
			}
			want, _ := degree.ParseMode(mode)
			ok := false
			for _, o := range offered {
				ok = ok || o == want
			}
			err := mm.Validate()
			if (err == nil) != ok {
				t.Errorf("%s --degree-bound %s: Validate = %v, want accepted = %v", name, mode, err, ok)
			}
			if err != nil && !strings.Contains(err.Error(), "--degree-bound") {
				t.Errorf("%s --degree-bound %s: refusal %q does not name the flag", name, mode, err)
			}
		}
	}
}

// TestDegreeBoundReportLines: the report line each method writes for its
// degree bound is the shared one, and for every mode it offers it states
// what is proven (public: "public bound: the guarantee covers every graph
// within D"), what is assumed (sample: "assumption: the raw graph is
// already within D") or that nothing is covered (none).
func TestDegreeBoundReportLines(t *testing.T) {
	covered := map[degree.Mode]string{
		degree.Public: "public bound: the guarantee covers every graph within D=7",
		degree.Sample: "assumption: the raw graph is already within D=7",
		degree.None:   "not covered",
	}
	for name, offered := range boundedMethods {
		for _, mode := range offered {
			m, _ := methods.New(name)
			if err := methods.SetConfig(m.Config(), "degree-bound="+mode.String()+",max-degree=7"); err != nil {
				t.Fatal(err)
			}
			b, err := m.Config().(interface{ Bound() (degree.Bound, error) }).Bound()
			if err != nil {
				t.Fatalf("%s %s: %v", name, mode, err)
			}
			u := b.Use()
			if u.Kind != "degree-bound" || !strings.HasPrefix(u.Covered, covered[mode]) || b.Mode != mode || b.D != 7 {
				t.Errorf("%s --degree-bound %s: bound %+v, report line %+v", name, mode, b, u)
			}
		}
	}
}
