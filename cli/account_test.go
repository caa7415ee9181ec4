package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// runAccount executes `dpgnn account ARGS...` on a fresh root and returns
// stdout and the error.
func runAccount(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRoot(&stdout, &stderr)
	root.SetArgs(append([]string{"account"}, args...))
	err := root.Execute()
	return stdout.String(), err
}

// accountJSON runs the command with --json and decodes its single JSON object.
func accountJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, err := runAccount(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("account %s: %v", strings.Join(args, " "), err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("account %s: output is not a JSON object: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		t.Fatalf("account %s: more than one JSON value on stdout:\n%s", strings.Join(args, " "), out)
	}
	return m
}

// num returns the numeric field key of m.
func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("JSON field %q = %v (%T), want a number; object %v", key, m[key], m[key], m)
	}
	return v
}

// str returns the string field key of m.
func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	v, ok := m[key].(string)
	if !ok {
		t.Fatalf("JSON field %q = %v (%T), want a string; object %v", key, m[key], m[key], m)
	}
	return v
}

func ff(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// exactGaussianEpsilon is the exact ε at delta of the μ-GDP mechanism,
// computed independently of package dp: bisection on
// δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), which decreases in ε.
func exactGaussianEpsilon(mu, delta float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	d := func(eps float64) float64 { return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2) }
	lo, hi := 0.0, 1.0
	for d(hi) > delta {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if d(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func TestAccountGaussianExact(t *testing.T) {
	const delta = 1e-5
	want := exactGaussianEpsilon(1, delta)
	if want < 4.2 || want > 4.6 {
		t.Fatalf("reference ε = %g, want about 4.4", want)
	}
	gdp := accountJSON(t, "gaussian", "--sigma", "1", "--count", "1", "--delta", "1e-5")
	got := num(t, gdp, "epsilon")
	if math.Abs(got-want) > 1e-9*want || got < want*(1-1e-12) {
		t.Errorf("gdp ε = %.15g, want exact %.15g", got, want)
	}
	if a := str(t, gdp, "accountant"); a != "gdp" {
		t.Errorf("default accountant = %q, want gdp", a)
	}
	if s := str(t, gdp, "solve"); s != "epsilon" {
		t.Errorf("solve = %q, want epsilon", s)
	}
	if d, c, s, mu := num(t, gdp, "delta"), num(t, gdp, "count"), num(t, gdp, "sigma"), num(t, gdp, "mu"); d != delta || c != 1 || s != 1 || mu != 1 {
		t.Errorf("echoed inputs delta=%g count=%g sigma=%g mu=%g, want 1e-5, 1, 1, 1", d, c, s, mu)
	}

	// K releases with multiplier σ are the same as one with σ/√K.
	k4 := num(t, accountJSON(t, "gaussian", "--sigma", "2", "--count", "4", "--delta", "1e-5"), "epsilon")
	if math.Abs(k4-want) > 1e-9*want {
		t.Errorf("gdp ε(σ=2, K=4) = %.15g, want ε(σ=1, K=1) = %.15g", k4, want)
	}

	prev := got
	for _, acct := range []string{"rdp", "rdp-standard"} {
		m := accountJSON(t, "gaussian", "--sigma", "1", "--count", "1", "--delta", "1e-5", "--accountant", acct)
		eps := num(t, m, "epsilon")
		if eps < prev {
			t.Errorf("%s ε = %g, below the previous (tighter) accountant's %g", acct, eps, prev)
		}
		if a := str(t, m, "accountant"); a != acct {
			t.Errorf("accountant = %q, want %q", a, acct)
		}
		if o := num(t, m, "order"); !(o > 1) {
			t.Errorf("%s order = %g, want > 1", acct, o)
		}
		prev = eps
	}
}

func TestAccountGaussianRoundTrip(t *testing.T) {
	cases := []struct {
		accountant string
		sigma      float64
		count      int
		delta      float64
	}{
		{"gdp", 1, 1, 1e-5},
		{"gdp", 4, 10, 1e-5},
		{"gdp", 0.5, 3, 1e-3},
		{"rdp", 4, 10, 1e-5},
		{"rdp-standard", 20, 100, 1e-6},
	}
	for _, c := range cases {
		base := []string{"gaussian", "--count", strconv.Itoa(c.count), "--delta", ff(c.delta), "--accountant", c.accountant}
		eps := num(t, accountJSON(t, append(base, "--sigma", ff(c.sigma))...), "epsilon")
		cal := accountJSON(t, append(base, "--epsilon", ff(eps))...)
		if s := str(t, cal, "solve"); s != "sigma" {
			t.Errorf("%v: solve = %q, want sigma", c, s)
		}
		sigma2 := num(t, cal, "sigma")
		if sigma2 > c.sigma*(1+1e-6) || sigma2 < c.sigma*(1-1e-4) {
			t.Errorf("%v: σ → ε = %g → σ' = %.12g, want σ' ≈ σ and σ' ≤ σ(1+1e-6)", c, eps, sigma2)
		}
		if ach := num(t, cal, "achieved_epsilon"); ach > eps {
			t.Errorf("%v: achieved ε = %.15g above the target %.15g", c, ach, eps)
		}
		if e := num(t, cal, "epsilon"); e != eps {
			t.Errorf("%v: echoed target ε = %g, want %g", c, e, eps)
		}
		eps2 := num(t, accountJSON(t, append(base, "--sigma", ff(sigma2))...), "epsilon")
		if eps2 > eps {
			t.Errorf("%v: ε(σ') = %.15g above the target %.15g", c, eps2, eps)
		}
	}
}

func TestAccountSGMRoundTrip(t *testing.T) {
	cases := []struct {
		conversion string
		rate, z    float64
		steps      int
	}{
		{"improved", 0.01, 1.1, 1000},
		{"standard", 0.01, 1.1, 1000},
		{"improved", 1, 2, 10},
	}
	for _, c := range cases {
		base := []string{"sgm", "--rate", ff(c.rate), "--steps", strconv.Itoa(c.steps), "--delta", "1e-5", "--conversion", c.conversion}
		m := accountJSON(t, append(base, "--noise", ff(c.z))...)
		eps, order := num(t, m, "epsilon"), num(t, m, "order")
		if !(eps > 0) || !(order > 1) {
			t.Fatalf("%v: ε = %g at order %g, want ε > 0 and order > 1", c, eps, order)
		}
		if a, conv := str(t, m, "accountant"), str(t, m, "conversion"); !strings.HasPrefix(a, "rdp") || conv != c.conversion {
			t.Errorf("%v: accountant %q conversion %q", c, a, conv)
		}
		if q, s, z := num(t, m, "rate"), num(t, m, "steps"), num(t, m, "noise"); q != c.rate || s != float64(c.steps) || z != c.z {
			t.Errorf("%v: echoed rate=%g steps=%g noise=%g", c, q, s, z)
		}
		cal := accountJSON(t, append(base, "--epsilon", ff(eps))...)
		z2 := num(t, cal, "noise")
		if z2 > c.z*(1+1e-6) || z2 < c.z*(1-1e-4) {
			t.Errorf("%v: z → ε = %g → z' = %.12g, want z' ≈ z and z' ≤ z(1+1e-6)", c, eps, z2)
		}
		if ach := num(t, cal, "achieved_epsilon"); ach > eps {
			t.Errorf("%v: achieved ε = %.15g above the target %.15g", c, ach, eps)
		}
		if o := num(t, cal, "order"); !(o > 1) {
			t.Errorf("%v: calibrated order = %g, want > 1", c, o)
		}
		eps2 := num(t, accountJSON(t, append(base, "--noise", ff(z2))...), "epsilon")
		if eps2 > eps {
			t.Errorf("%v: ε(z') = %.15g above the target %.15g", c, eps2, eps)
		}
	}
	// The improved conversion is never looser than the standard one.
	imp := num(t, accountJSON(t, "sgm", "--rate", "0.01", "--noise", "1.1", "--steps", "1000", "--delta", "1e-5"), "epsilon")
	std := num(t, accountJSON(t, "sgm", "--rate", "0.01", "--noise", "1.1", "--steps", "1000", "--delta", "1e-5", "--conversion", "standard"), "epsilon")
	if imp > std {
		t.Errorf("improved ε %g > standard ε %g", imp, std)
	}
}

func TestAccountText(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"gaussian", "--sigma", "4", "--count", "10", "--delta", "1e-5"},
			[]string{"ε = ", "δ = 1e-05", "gdp accountant", "10 Gaussian releases", "noise multiplier 4"}},
		{[]string{"gaussian", "--epsilon", "1", "--count", "10", "--delta", "1e-5", "--accountant", "rdp"},
			[]string{"noise multiplier σ = ", "ε ≤ 1", "rdp accountant", "improved conversion"}},
		{[]string{"sgm", "--rate", "0.01", "--noise", "1.1", "--steps", "100", "--delta", "1e-5"},
			[]string{"ε = ", "rdp accountant", "order α = ", "100 steps", "rate 0.01"}},
		{[]string{"sgm", "--rate", "0.01", "--epsilon", "1", "--steps", "100", "--delta", "1e-5"},
			[]string{"noise multiplier z = ", "ε ≤ 1", "clipping norm"}},
		{[]string{}, []string{"noise multiplier", "gdp", "rdp", "upper bound", "gaussian", "sgm"}},
		{[]string{"--help"}, []string{"noise multiplier", "gdp", "rdp", "upper bound", "gaussian", "sgm"}},
	}
	for _, c := range cases {
		out, err := runAccount(t, c.args...)
		if err != nil {
			t.Errorf("account %v: %v", c.args, err)
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(out), "{") {
			t.Errorf("account %v printed JSON without --json:\n%s", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("account %v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

// TestFmtUp checks that printed values are rounded up, never down.
func TestFmtUp(t *testing.T) {
	for _, x := range []float64{1, 4.377181919, 0.999999999576, 11.797293081647487, 1.23456e-7, 123456789, 2.0000000001} {
		s := fmtUp(x)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < x || v > x*(1+2e-5) {
			t.Errorf("fmtUp(%.17g) = %q, want a value in [x, x(1+2e-5)]", x, s)
		}
	}
	if s := fmtUp(math.Inf(1)); s != "∞" {
		t.Errorf("fmtUp(+Inf) = %q", s)
	}
}

func TestAccountErrors(t *testing.T) {
	g := func(extra ...string) []string {
		// A valid gaussian request, with extra flags overriding or adding.
		return append([]string{"gaussian", "--count", "10", "--delta", "1e-5"}, extra...)
	}
	s := func(extra ...string) []string {
		return append([]string{"sgm", "--rate", "0.01", "--steps", "100", "--delta", "1e-5"}, extra...)
	}
	cases := []struct {
		name string
		args []string
		want []string // substrings of the error
	}{
		{"gaussian both", g("--sigma", "1", "--epsilon", "1"), []string{"--sigma", "--epsilon", "not both"}},
		{"gaussian neither", g(), []string{"--sigma", "--epsilon"}},
		{"sigma zero", g("--sigma", "0"), []string{"--sigma"}},
		{"sigma negative", g("--sigma", "-1"), []string{"--sigma"}},
		{"sigma NaN", g("--sigma", "NaN"), []string{"--sigma"}},
		{"sigma inf", g("--sigma", "inf"), []string{"--sigma"}},
		{"sigma not a number", g("--sigma", "abc"), []string{"--sigma"}},
		{"epsilon zero", g("--epsilon", "0"), []string{"--epsilon"}},
		{"epsilon negative", g("--epsilon", "-2"), []string{"--epsilon"}},
		{"epsilon NaN", g("--epsilon", "nan"), []string{"--epsilon"}},
		{"epsilon inf", g("--epsilon", "inf"), []string{"--epsilon"}},
		// The standard conversion has ε ≥ ln(1/δ)/(α_max − 1) ≈ 1.1e-5 at any noise (α_max = 2^20).
		{"epsilon unreachable", g("--epsilon", "1e-6", "--accountant", "rdp-standard"), []string{"--epsilon", "not reachable"}},
		{"delta missing", []string{"gaussian", "--count", "1", "--sigma", "1"}, []string{"--delta"}},
		{"delta zero", g("--sigma", "1", "--delta", "0"), []string{"--delta"}},
		{"delta one", g("--sigma", "1", "--delta", "1"), []string{"--delta"}},
		{"delta above one", g("--sigma", "1", "--delta", "1.5"), []string{"--delta"}},
		{"delta NaN", g("--sigma", "1", "--delta", "NaN"), []string{"--delta"}},
		{"count missing", []string{"gaussian", "--sigma", "1", "--delta", "1e-5"}, []string{"--count"}},
		{"count zero", g("--sigma", "1", "--count", "0"), []string{"--count"}},
		{"count negative", g("--sigma", "1", "--count", "-3"), []string{"--count"}},
		{"unknown accountant", g("--sigma", "1", "--accountant", "moments"), []string{"--accountant", "moments"}},
		{"gaussian extra arg", g("--sigma", "1", "extra"), []string{"extra"}},
		{"sgm both", s("--noise", "1", "--epsilon", "1"), []string{"--noise", "--epsilon", "not both"}},
		{"sgm neither", s(), []string{"--noise", "--epsilon"}},
		{"noise zero", s("--noise", "0"), []string{"--noise"}},
		{"noise NaN", s("--noise", "NaN"), []string{"--noise"}},
		{"sgm epsilon negative", s("--epsilon", "-1"), []string{"--epsilon"}},
		{"rate missing", []string{"sgm", "--steps", "10", "--delta", "1e-5", "--noise", "1"}, []string{"--rate"}},
		{"rate zero", s("--noise", "1", "--rate", "0"), []string{"--rate"}},
		{"rate above one", s("--noise", "1", "--rate", "1.5"), []string{"--rate"}},
		{"rate NaN", s("--noise", "1", "--rate", "NaN"), []string{"--rate"}},
		{"steps missing", []string{"sgm", "--rate", "0.1", "--delta", "1e-5", "--noise", "1"}, []string{"--steps"}},
		{"steps zero", s("--noise", "1", "--steps", "0"), []string{"--steps"}},
		{"steps negative", s("--noise", "1", "--steps", "-1"), []string{"--steps"}},
		{"sgm delta", s("--noise", "1", "--delta", "2"), []string{"--delta"}},
		{"unknown conversion", s("--noise", "1", "--conversion", "fancy"), []string{"--conversion", "fancy"}},
		{"sgm accountant gdp", s("--noise", "1", "--accountant", "gdp"), []string{"--accountant", "subsampling"}},
		{"sgm accountant unknown", s("--noise", "1", "--accountant", "moments"), []string{"--accountant", "moments"}},
		{"sgm pld with conversion", s("--noise", "1", "--accountant", "pld", "--conversion", "standard"), []string{"--conversion", "pld"}},
		{"unknown calculator", []string{"progapp"}, []string{"progapp", "gaussian", "sgm"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[0] == "gaussian" || args[0] == "sgm" {
				args = append(args, "--json") // errors, not JSON, even under --json
			}
			out, err := runAccount(t, args...)
			if err == nil {
				t.Fatalf("account %v: no error; output %s", c.args, out)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
		})
	}
}

// TestAccountGCON: the calculator reproduces the first and fourth reference
// calibration vectors computed from GCON's Theorem 1 in float64 (ξ = 1e-6) and ξ = auto gives Λ = 2Λ_min.
func TestAccountGCON(t *testing.T) {
	get := func(args ...string) map[string]float64 {
		t.Helper()
		out, err := runCLI(t, append([]string{"account", "gcon", "--json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var dec map[string]any
		if err := json.Unmarshal([]byte(out), &dec); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		r := map[string]float64{}
		for k, v := range dec {
			if f, ok := v.(float64); ok {
				r[k] = f
			}
		}
		return r
	}
	rel := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Errorf("%s = %.10g, want %.10g", name, got, want)
		}
	}
	r := get("--epsilon", "1", "--delta", strconv.FormatFloat(1.0/16316, 'g', -1, 64), "--classes", "7", "--n1", "140", "--dim", "16",
		"--alpha", "0.8", "--steps", "2", "--lambda", "0.2", "--xi", "1e-6")
	rel("c_sf", r["c_sf"], 39.25769121, 1e-9)
	rel("c_θ", r["c_theta"], 1.798211392, 1e-9)
	rel("ε_Λ", r["eps_lambda"], 0.01153711385, 1e-9)
	rel("β", r["beta"], 1.420643395, 1e-9)
	rel("accounted ε", r["accounted_epsilon"], 1, 1e-12)
	r = get("--epsilon", "1", "--delta", strconv.FormatFloat(1.0/88648, 'g', -1, 64), "--classes", "3", "--n1", "19717", "--dim", "64",
		"--alpha", "0.4", "--steps", "inf", "--lambda", "0.01", "--xi", "1e-6")
	rel("Λ'", r["lambda_prime"], 1.045597533e-4, 1e-8)
	rel("β", r["beta"], 0.01769397389, 1e-8)
	if r["accounted_epsilon"] > 1+1e-12 {
		t.Errorf("accounted ε %v > 1", r["accounted_epsilon"])
	}
	r = get("--epsilon", "0.5", "--delta", "1e-4", "--classes", "6", "--n1", "120", "--dim", "64",
		"--alpha", "0.2", "--steps", "10", "--lambda", "0.01")
	rel("Λ (ξ=auto)", r["lambda"], 2*r["lambda_min"], 1e-12)
}

// TestAccountMethodCountFlags: a method's account command has the count
// flags its plans use and no others, with the method's own description
// where it gives one (ASGL's node ids are not Poisson-sampled).
func TestAccountMethodCountFlags(t *testing.T) {
	for _, tc := range []struct {
		method       string
		want, absent []string
	}{
		{"asgl", []string{"--train-nodes", "one training subgraph each", "counts a dataset would give (--train-nodes)"}, []string{"--classes", "--n1", "--dim", "Poisson-sampled"}},
		{"gcon", []string{"--classes", "--n1", "--dim"}, []string{"--train-nodes"}},
		{"mlp", []string{"--train-nodes", "Poisson-sampled"}, []string{"--classes", "--n1"}},
	} {
		out, err := runCLI(t, "account", tc.method, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("account %s --help lacks %q", tc.method, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(out, a) {
				t.Errorf("account %s --help shows %q", tc.method, a)
			}
		}
	}
	if _, err := runCLI(t, "account", "gcon", "--epsilon", "1", "--delta", "1e-5", "--train-nodes", "10"); err == nil || !strings.Contains(err.Error(), "train-nodes") {
		t.Errorf("account gcon --train-nodes: err = %v, want an unknown flag", err)
	}
}

// TestAccountPLD: account sgm --accountant pld matches Google dp_accounting's
// PLD (pessimistic connect-the-dots, value_discretization_interval 1e-4;
// python/dp_accounting run with /usr/bin/python3:
// pld.from_gaussian_mechanism(z, sampling_prob=q, use_connect_dots=True,
// value_discretization_interval=1e-4).self_compose(T).get_epsilon_for_delta(δ))
// within 1%, is below the RDP accountant's ε, and calibrates the noise both
// ways; account gaussian --accountant pld is within 1e-3 of the exact gdp.
func TestAccountPLD(t *testing.T) {
	for _, c := range []struct {
		q, z, delta, ref float64
		steps            string
	}{
		{0.01, 1.1, 1e-5, 1.5153702489167646, "1000"},
		{0.1, 2.0, 1e-6, 2.6750357402486706, "100"},
		{0.5, 3.0, 1e-5, 3.3997239287583336, "20"},
	} {
		args := []string{"sgm", "--rate", ff(c.q), "--steps", c.steps, "--noise", ff(c.z), "--delta", ff(c.delta)}
		m := accountJSON(t, append(args, "--accountant", "pld")...)
		eps := num(t, m, "epsilon")
		if math.Abs(eps/c.ref-1) > 0.01 {
			t.Errorf("%v: pld ε = %.8g, dp_accounting %.8g", args, eps, c.ref)
		}
		if a := str(t, m, "accountant"); a != "pld" {
			t.Errorf("accountant = %q", a)
		}
		if d := num(t, m, "discretization"); d != 1e-4 {
			t.Errorf("discretization = %g", d)
		}
		if rdp := num(t, accountJSON(t, args...), "epsilon"); !(eps < rdp) {
			t.Errorf("%v: pld ε %g not below rdp's %g", args, eps, rdp)
		}
		cal := accountJSON(t, "sgm", "--rate", ff(c.q), "--steps", c.steps, "--epsilon", ff(c.ref), "--delta", ff(c.delta), "--accountant", "pld")
		if z := num(t, cal, "noise"); math.Abs(z/c.z-1) > 0.01 || num(t, cal, "achieved_epsilon") > c.ref {
			t.Errorf("%v: calibrated noise %g (achieved ε %g) for ε = %g, want ≈ %g", args, z, num(t, cal, "achieved_epsilon"), c.ref, c.z)
		}
	}
	gdp := num(t, accountJSON(t, "gaussian", "--sigma", "4", "--count", "10", "--delta", "1e-5"), "epsilon")
	pld := num(t, accountJSON(t, "gaussian", "--sigma", "4", "--count", "10", "--delta", "1e-5", "--accountant", "pld"), "epsilon")
	if pld < gdp || pld > gdp*(1+1e-3) {
		t.Errorf("gaussian: pld ε %.10g, exact gdp %.10g", pld, gdp)
	}
}
