// The elementwise kernels that cuBLAS and cuDNN lack. kernels.ptx is
// generated from this file by clang (go generate ./nn/cuda; see
// kernels.go), so that building flipzero needs no CUDA toolkit: the
// driver compiles the PTX for whatever GPU it finds.
//
// One thread per output element (or per row, where a row is summed):
// the launcher (Device.launch) runs ceil(total / 256) blocks of 256. No
// CUDA headers: the few built-ins used are clang's. Products and sums are
// rounded separately (-ffp-contract=off), as Go computes them.
//
// A tensor of positions × channels × cells is read through strides, so
// that one kernel serves the NCHW tensors of cuDNN and the
// (position·cell, channel) rows of the SGEMM path: element (n, c, p) is
// at n·sN + c·sC + p·sP.

#define KERNEL extern "C" __attribute__((global))
typedef unsigned int u32;

static __attribute__((device)) __attribute__((always_inline)) u32 thread_index() {
	return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
}

// Float16 values are held as their bits (u16): f2h rounds to nearest
// even, h2f is exact.
typedef unsigned short u16;

static __attribute__((device)) __attribute__((always_inline)) u16 f2h(float f) { return __nvvm_f2h_rn(f); }

static __attribute__((device)) __attribute__((always_inline)) float h2f(u16 h) {
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

// im2row gathers each cell's K×K neighbourhood (zero outside the board)
// into a row of K·K·C values ordered (ky, kx, c): a convolution is then
// one matrix product.
KERNEL void im2row(const float* src, float* dst, u32 total, u32 C, u32 H, u32 W, u32 K, u32 cells,
	u32 sN, u32 sC, u32 sP) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 c = i % C, t = i / C;
	u32 kk = t % (K * K), r = t / (K * K);
	u32 ky = kk / K, kx = kk % K;
	u32 n = r / cells, p = r % cells;
	u32 y = p / W + ky - K / 2, x = p % W + kx - K / 2; // wraps below zero
	float v = 0.0f;
	if (y < H && x < W) v = src[n * sN + c * sC + (y * W + x) * sP];
	dst[i] = v;
}

// biasact computes y = y + bias[i mod C] (+ skip[i] when skip is not
// null), then max(y, 0) when relu is not zero: the epilogue of a
// convolution, a residual block or a dense layer on rows of C values.
KERNEL void biasact(float* y, const float* bias, const float* skip, u32 total, u32 C, u32 relu) {
	u32 i = thread_index();
	if (i >= total) return;
	float v = y[i] + bias[i % C];
	if (skip) v = v + skip[i];
	if (relu) v = v > 0.0f ? v : 0.0f;
	y[i] = v;
}

// chanbias computes y = x + bias[n·bN + c] for each element of N
// positions of C channels × cells, the channel being (i / cdiv) mod C
// (cdiv: cells for NCHW, 1 for rows) and the position i / (C·cells):
// bN = C adds each position's own biases (global pooling), bN = 0 one
// bias per channel. x and y may be the same.
KERNEL void chanbias(const float* x, const float* bias, float* y, u32 total, u32 C, u32 cells, u32 cdiv, u32 bN) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 c = (i / cdiv) % C, n = i / (C * cells);
	y[i] = x[i] + bias[n * bN + c];
}

// pool writes, for each of N positions and C channels (total = N·C),
// the channel's mean over the cells to y[n·2C + c] and its maximum to
// y[n·2C + C + c], and where argmax is not null the first cell holding
// the maximum (for the gradient).
KERNEL void pool(const float* x, float* y, u32* argmax, u32 total, u32 C, u32 cells, u32 sN, u32 sC, u32 sP) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 n = i / C, c = i % C;
	const float* p = x + n * sN + c * sC;
	float sum = 0.0f, best = -__builtin_inff();
	u32 at = 0;
	for (u32 k = 0; k < cells; k++) {
		float v = p[k * sP];
		sum = sum + v;
		if (v > best) {
			best = v;
			at = k;
		}
	}
	y[n * 2 * C + c] = sum / (float)cells;
	y[n * 2 * C + C + c] = best;
	if (argmax) argmax[i] = at;
}

// poolgrad is pool's gradient on NCHW x: each cell gets its channel's
// mean gradient over the cells, and the maximum's cell the maximum's
// gradient too; added to dx when add is not zero.
KERNEL void poolgrad(const float* dy, const u32* argmax, float* dx, u32 total, u32 C, u32 cells, u32 add) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 k = i % cells, nc = i / cells;
	u32 n = nc / C, c = nc % C;
	float g = dy[n * 2 * C + c] / (float)cells;
	if (argmax[nc] == k) g = g + dy[n * 2 * C + C + c];
	if (add) g = g + dx[i];
	dx[i] = g;
}

// gather picks each action's logit (total = N·A): index[a] below
// spatial = planes·cells reads plane index / cells, cell index mod cells
// of position n's policy planes (strided); from spatial on, global
// logit index − spatial of the position's G.
KERNEL void gather(const float* planes, const float* global, const int* index, float* logits, u32 total, u32 A,
	u32 cells, u32 spatial, u32 G, u32 sN, u32 sC, u32 sP) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 n = i / A, k = (u32)index[i % A];
	float v;
	if (k < spatial) v = planes[n * sN + (k / cells) * sC + (k % cells) * sP];
	else v = global[n * G + (k - spatial)];
	logits[i] = v;
}

// scatter is gather's gradient on packed planes (N, spatial) and global
// logits (N, G), which must be zero: the actions' logits are distinct,
// so each is written once.
KERNEL void scatter(const float* dlogits, const int* index, float* dplanes, float* dglobal, u32 total, u32 A,
	u32 spatial, u32 G) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 n = i / A, k = (u32)index[i % A];
	if (k < spatial) dplanes[n * spatial + k] = dlogits[i];
	else dglobal[n * G + (k - spatial)] = dlogits[i];
}

static __attribute__((device)) __attribute__((always_inline)) float tanh_(float x) {
	// 1 − 2/(e^{2|x|} + 1), with the sign of x: exact to a few units in
	// the last place of 1, which is all the auxiliary heads need.
	float a = x < 0.0f ? -x : x;
	float e = __nvvm_ex2_approx_f(a * 2.885390081777927f); // 2·log2(e)
	float t = 1.0f - 2.0f / (e + 1.0f);
	return x < 0.0f ? -t : t;
}

// tanhsq is an auxiliary head's loss and its gradient: with
// y = tanh(z), term = w·(y − target)² and dz = 2w·(y − target)·(1 − y²).
KERNEL void tanhsq(const float* z, const float* target, const float* w, float* term, float* dz, u32 total) {
	u32 i = thread_index();
	if (i >= total) return;
	float y = tanh_(z[i]);
	float d = y - target[i];
	float wd = w[i] * d;
	term[i] = wd * d;
	dz[i] = 2.0f * wd * (1.0f - y * y);
}

// masklogits sets an illegal action's logit to −1e4, as nn's trainer
// does.
KERNEL void masklogits(const float* x, const float* legal, float* y, u32 total) {
	u32 i = thread_index();
	if (i >= total) return;
	y[i] = legal[i] == 0.0f ? -1e4f : x[i];
}

// rowscale multiplies each row of cols values by its own factor.
KERNEL void rowscale(const float* x, const float* s, float* y, u32 total, u32 cols) {
	u32 i = thread_index();
	if (i >= total) return;
	y[i] = x[i] * s[i / cols];
}

// softgrad is the gradient of a cross-entropy against targets with row
// sums S: (p·S − t) on legal actions (legal may be null).
KERNEL void softgrad(const float* p, const float* t, const float* rows, const float* legal, float* d, u32 total,
	u32 cols) {
	u32 i = thread_index();
	if (i >= total) return;
	float g = p[i] * rows[i / cols] - t[i];
	if (legal) g = g * legal[i];
	d[i] = g;
}

// sgd is nn's momentum update, v = μv + g + decay·w then w −= lr·v, with
// decay applied to the first decayEnd values only (the weights, stored
// first). It changes nothing unless each loss sum the mask selects (bit
// j: sums[j]) is finite: the host reads the losses only once the step is
// done, and a step with a loss that is not finite must leave the weights
// and the momentum as they were.
KERNEL void sgd(float* w, float* v, const float* g, u32 total, u32 decayEnd, float lr, float mu, float decay, const float* sums, u32 mask) {
	u32 i = thread_index();
	if (i >= total) return;
	for (u32 j = 0; (mask >> j) != 0; j++)
		if (((mask >> j) & 1) && !__builtin_isfinite(sums[j])) return;
	float x = w[i];
	float dc = i < decayEnd ? decay : 0.0f;
	float m = mu * v[i] + g[i] + dc * x;
	v[i] = m;
	w[i] = x - lr * m;
}

// The float16 path's conversions and global pooling, on NHWC tensors
// (position, cell, channel).

// tohalf converts N positions of C channels × cells from NCHW float32 to
// NHWC float16 of P ≥ C channels, the channels from C on zero (total =
// N·cells·P): dst[(n·cells + p)·P + c] = src[(n·C + c)·cells + p].
KERNEL void tohalf(const float* src, u16* dst, u32 total, u32 C, u32 P, u32 cells) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 c = i % P, r = i / P;
	u32 p = r % cells, n = r / cells;
	dst[i] = c < C ? f2h(src[(n * C + c) * cells + p]) : 0;
}

// tofloat converts total float16s to float32.
KERNEL void tofloat(const u16* src, float* dst, u32 total) {
	u32 i = thread_index();
	if (i >= total) return;
	dst[i] = h2f(src[i]);
}

// poolh is pool on NHWC float16 activations (total = N·C): each
// channel's mean over the cells to y[n·2C + c], its maximum to
// y[n·2C + C + c], summed in float32.
KERNEL void poolh(const u16* x, float* y, u32 total, u32 C, u32 cells) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 n = i / C, c = i % C;
	const u16* p = x + n * cells * C + c;
	float sum = 0.0f, best = -__builtin_inff();
	for (u32 k = 0; k < cells; k++) {
		float v = h2f(p[k * C]);
		sum = sum + v;
		if (v > best) best = v;
	}
	y[n * 2 * C + c] = sum / (float)cells;
	y[n * 2 * C + C + c] = best;
}

// chanbiash adds each position's float32 channel biases to NHWC float16
// activations in place (total = N·cells·C): x[(n·cells + p)·C + c] +=
// bias[n·C + c], rounded back to float16.
KERNEL void chanbiash(u16* x, const float* bias, u32 total, u32 C, u32 cells) {
	u32 i = thread_index();
	if (i >= total) return;
	u32 c = i % C, n = i / (C * cells);
	x[i] = f2h(h2f(x[i]) + bias[n * C + c]);
}
