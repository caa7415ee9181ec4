package vec

import "fmt"

// Column reductions: sums over the rows of a row-major matrix, each column
// summed row after row as the scalar loop `for each row { for each column
// { acc[c] += f(row, c) } }` sums it, so the results are that loop's bits.
// AVX runs the leading multiple of four columns (four columns to a
// register, the accumulators in memory: a column's additions stay in row
// order), the scalar loop the rest. Row r of x (and dy) starts at r·ld;
// the row width k is len(acc) (len(a)).

// ColAdd adds rows rows of x to acc: acc[c] += x[r·ld+c].
func ColAdd(acc, x []float64, rows, ld int) {
	k := len(acc)
	checkCols("ColAdd", k, rows, ld, x)
	for c := colRed(0, acc, nil, x, nil, nil, nil, rows, k, ld); c < k; c++ {
		for r := 0; r < rows; r++ {
			acc[c] += x[r*ld+c]
		}
	}
}

// ColSqDev adds the squared deviations from m: acc[c] += (x[r·ld+c] −
// m[c])², the difference rounded, then its square, then the sum.
func ColSqDev(acc, x, m []float64, rows, ld int) {
	k := len(acc)
	checkCols("ColSqDev", k, rows, ld, x)
	if len(m) < k {
		panic(fmt.Sprintf("vec: ColSqDev of %d columns with %d means", k, len(m)))
	}
	for c := colRed(1, acc, nil, x, nil, m, nil, rows, k, ld); c < k; c++ {
		for r := 0; r < rows; r++ {
			d := x[r*ld+c] - m[c]
			acc[c] += d * d
		}
	}
}

// ColGrad adds BatchNorm's gradient sums: a[c] += dy[r·ld+c] and b[c] +=
// dy·(x − m[c])·s[c], taken left to right.
func ColGrad(a, b, x, dy, m, s []float64, rows, ld int) {
	k := len(a)
	checkCols("ColGrad", k, rows, ld, x)
	checkCols("ColGrad", k, rows, ld, dy)
	if len(b) < k || len(m) < k || len(s) < k {
		panic(fmt.Sprintf("vec: ColGrad of %d columns with %d, %d and %d entries", k, len(b), len(m), len(s)))
	}
	for c := colRed(2, a, b, x, dy, m, s, rows, k, ld); c < k; c++ {
		for r := 0; r < rows; r++ {
			d := dy[r*ld+c]
			a[c] += d
			b[c] += d * (x[r*ld+c] - m[c]) * s[c]
		}
	}
}

// checkCols panics unless x holds rows rows of k entries ld apart.
func checkCols(what string, k, rows, ld int, x []float64) {
	if rows < 0 || (rows > 0 && (ld < k || len(x) < (rows-1)*ld+k)) {
		panic(fmt.Sprintf("vec: %s of %d rows of %d entries, %d apart, from %d entries", what, rows, k, ld, len(x)))
	}
}
