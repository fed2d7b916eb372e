package env

// squareSymmetryNames names the 8 symmetries of a square board in the
// order SquareCellMaps returns them.
var squareSymmetryNames = [8]string{
	"identity", "rot90", "rot180", "rot270",
	"flip-x", "flip-y", "transpose", "anti-transpose",
}

// SquareCellMaps returns the 8 symmetries of an n×n board as permutations
// of the cells y*n+x: maps[k][c] is where symmetry k sends cell c. The
// identity comes first; names[k] says what symmetry k is.
func SquareCellMaps(n int) (maps [8][]int, names [8]string) {
	for k := range maps {
		maps[k] = make([]int, n*n)
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				tx, ty := squareTransform(k, x, y, n-1)
				maps[k][y*n+x] = ty*n + tx
			}
		}
	}
	return maps, squareSymmetryNames
}

func squareTransform(k, x, y, last int) (int, int) {
	switch k {
	case 1:
		return last - y, x
	case 2:
		return last - x, last - y
	case 3:
		return y, last - x
	case 4:
		return last - x, y
	case 5:
		return x, last - y
	case 6:
		return y, x
	case 7:
		return last - y, last - x
	default:
		return x, y
	}
}
