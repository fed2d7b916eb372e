package cpu

import "unsafe"

// directWeightGrad is a training graph's convolution weight gradient on
// the direct kernels (direct_amd64.s, direct_arm64.s), in float32, wherever the AMX one
// (amxWeightGrad) does not run. The gradient is a product that the forward kernels
// already compute: a tile of theirs is pixels × output channels, summed
// over a pixel's inputs; here it is weight rows × output channels,
// summed over the batch's pixels:
//
//	dw[o][k] = Σ_p cols[k][p] · dy[p][o]
//
// with cols the im2col of x (row k a channel at one kernel offset, over
// a group of images' cells) and dy the output's gradient laid out pixel
// by pixel. The tile's "pixels" are then rows of cols, whose values over
// p are one run of contiguous inputs, and its weight rows are dy's
// pixels. Each tile adds its sums to the rows it computed (the kernels'
// skip), so the groups of images accumulate in place.
//
// It replaces, where the CPU has the kernels, one GEMM per group of
// images on the BLAS: those calls run OpenBLAS through the runtime's
// foreign-call path, and for each call longer than the scheduler's tick
// the runtime hands the core to another thread and back.
type directWeightGrad struct {
	seq   []int32     // 0, 1, …: the pixel positions of a group's dy
	zeros []float32   // the kernels' bias: none
	sums  [][]float32 // each worker's sums, (k, out)
	dyT   [][]float32 // each worker's group of dy, (pixels, out) and slack
}

// run computes dw (out, in, kernel, kernel), the weight gradient of
// convolution g of x (batch, in, h, w) whose output's gradient is dy
// (batch, out, h, w), with arch's float32 kernels, the batch split over
// at most workers cores; cols are the workers' im2col buffers.
func (d *directWeightGrad) run(arch directArch, g convGeom, batch, workers int, x, dy, dw []float32, cols [][]float32) {
	cells, k, group := g.cells(), g.k(), g.groupImages()
	workers = min(workers, len(cols))
	if len(d.seq) != group*cells {
		d.seq = make([]int32, group*cells)
		for i := range d.seq {
			d.seq[i] = int32(i)
		}
	}
	if len(d.zeros) < g.out+weightSlack {
		d.zeros = make([]float32, g.out+weightSlack)
	}
	d.sums = scratch(d.sums, k*g.out, workers)
	d.dyT = scratch(d.dyT, group*cells*g.out+weightSlack, workers)
	workers = parallelFor(batch, workers, func(worker, lo, hi int) {
		sums, dyT, c := d.sums[worker], d.dyT[worker], cols[worker]
		clear(sums)
		for first := lo; first < hi; first += group {
			n := min(group, hi-first)
			ld := n * cells
			for j := 0; j < n; j++ {
				b := first + j
				g.columns(x[b*g.in*cells:(b+1)*g.in*cells], c, j, ld)
				toPixels(dyT, dy[b*g.out*cells:(b+1)*g.out*cells], d.seq[j*cells:(j+1)*cells], g.out)
			}
			d.tiles(arch, k, g.out, ld, c, dyT, sums)
		}
	})
	for o := 0; o < g.out; o++ {
		row := dw[o*k : (o+1)*k]
		for i := range row {
			v := d.sums[0][i*g.out+o]
			for _, s := range d.sums[1:workers] {
				v += s[i*g.out+o]
			}
			row[i] = v
		}
	}
}

// tiles adds to sums (k, out) the products of cols' k rows (ld values
// each) with dyT's ld pixels (out values each).
func (d *directWeightGrad) tiles(arch directArch, k, out, ld int, cols, dyT, sums []float32) {
	matmulDirect(arch, cols, dyT, sums, d.zeros, k, ld, out, true)
}

// matmulDirect computes c (rows, n) = a (rows, k) · b (k, n) + bias (n
// values and slack), plus c's own values where accumulate, on arch's
// float32 kernels: a tile of arch.pixels rows by a block of columns at a
// time, a row of a the tile's "pixel" (one run of k inputs) and b its
// weight rows.
func matmulDirect(arch directArch, a, b, c, bias []float32, rows, k, n int, accumulate bool) {
	var t directTile
	t.in = unsafe.Pointer(&a[0])
	t.segLen[0] = int64(k)
	t.ldw = int64(n) * 4
	block := arch.lanes * arch.groups
	for col := 0; col < n; col += block {
		groups := t.block(arch, min(block, n-col))
		t.w, t.bias = unsafe.Pointer(&b[col]), unsafe.Pointer(&bias[col])
		t.out = unsafe.Pointer(&c[col])
		if accumulate {
			t.skip = t.out
		}
		for first := 0; first < rows; first += arch.pixels {
			// A last, partial tile repeats its last row: both copies
			// read the row's sums before either is stored, so the row
			// gets the same sum twice, not two sums.
			for r := range arch.pixels {
				i := int64(min(first+r, rows-1))
				t.inOff[r] = i * int64(k) * 4
				t.outOff[r] = i * int64(n) * 4
			}
			directKernel(arch, groups, precFloat32, &t)
		}
	}
}
