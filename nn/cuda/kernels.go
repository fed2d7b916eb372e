package cuda

// kernelsPTX holds the elementwise kernels that cuBLAS and cuDNN lack,
// as PTX that the driver compiles for whatever GPU it finds, so that
// building needs no CUDA compiler. One thread per output element.
//
// im2row gathers each cell's K×K neighbourhood (zero outside the board)
// into a row of K·K·C values ordered (ky, kx, c): a convolution is then
// one matrix product. The source element (n, c, y, x) is read at
// n·sN + c·sC + (y·W + x)·sP, so one kernel reads both the NCHW input
// and the (position·cell, channel) activations.
//
// The training kernels: masklogits sets an illegal action's logit to
// −1e4, as nn's trainer does; rowscale multiplies each row by its own
// factor; softgrad is the gradient of a cross-entropy against targets
// with row sums S, (p·S − t) on legal actions (legal may be null); sgd is
// nn's momentum update, v = μv + g + decay·w then w −= lr·v, with decay
// applied to the first decayEnd values only (the weights, stored first).
// Products and sums are rounded separately (.rn), as Go computes them.
//
// biasact computes y = y + bias[i mod C] (+ skip[i] when skip is not
// null), then max(y, 0) when relu is not zero: the epilogue of a
// convolution, a residual block or a dense layer.
const kernelsPTX = `
.version 7.0
.target sm_70
.address_size 64

.visible .entry im2row(
	.param .u64 src, .param .u64 dst, .param .u32 total, .param .u32 C,
	.param .u32 H, .param .u32 W, .param .u32 K, .param .u32 cells,
	.param .u32 sN, .param .u32 sC, .param .u32 sP)
{
	.reg .pred %p<4>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<2>;

	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.u32 %r4, %r1, %r2, %r3;
	ld.param.u32 %r5, [total];
	setp.ge.u32 %p1, %r4, %r5;
	@%p1 bra IM_DONE;
	ld.param.u32 %r6, [C];
	ld.param.u32 %r7, [H];
	ld.param.u32 %r8, [W];
	ld.param.u32 %r9, [K];
	ld.param.u32 %r10, [cells];
	rem.u32 %r11, %r4, %r6;
	div.u32 %r12, %r4, %r6;
	mul.lo.u32 %r13, %r9, %r9;
	rem.u32 %r14, %r12, %r13;
	div.u32 %r15, %r12, %r13;
	div.u32 %r16, %r14, %r9;
	rem.u32 %r17, %r14, %r9;
	div.u32 %r18, %r15, %r10;
	rem.u32 %r19, %r15, %r10;
	div.u32 %r20, %r19, %r8;
	rem.u32 %r21, %r19, %r8;
	shr.u32 %r22, %r9, 1;
	add.u32 %r23, %r20, %r16;
	sub.u32 %r23, %r23, %r22;
	add.u32 %r24, %r21, %r17;
	sub.u32 %r24, %r24, %r22;
	mov.f32 %f1, 0f00000000;
	setp.ge.u32 %p2, %r23, %r7;
	setp.ge.u32 %p3, %r24, %r8;
	or.pred %p2, %p2, %p3;
	@%p2 bra IM_STORE;
	ld.param.u32 %r25, [sN];
	ld.param.u32 %r26, [sC];
	ld.param.u32 %r27, [sP];
	mad.lo.u32 %r28, %r23, %r8, %r24;
	mul.lo.u32 %r29, %r28, %r27;
	mad.lo.u32 %r29, %r11, %r26, %r29;
	mad.lo.u32 %r29, %r18, %r25, %r29;
	ld.param.u64 %rd1, [src];
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r29, 4;
	add.u64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
IM_STORE:
	ld.param.u64 %rd5, [dst];
	cvta.to.global.u64 %rd6, %rd5;
	mul.wide.u32 %rd7, %r4, 4;
	add.u64 %rd6, %rd6, %rd7;
	st.global.f32 [%rd6], %f1;
IM_DONE:
	ret;
}

.visible .entry biasact(
	.param .u64 y, .param .u64 bias, .param .u64 skip,
	.param .u32 total, .param .u32 C, .param .u32 relu)
{
	.reg .pred %q<4>;
	.reg .b32 %s<10>;
	.reg .b64 %d<8>;
	.reg .f32 %g<4>;

	mov.u32 %s1, %ctaid.x;
	mov.u32 %s2, %ntid.x;
	mov.u32 %s3, %tid.x;
	mad.lo.u32 %s4, %s1, %s2, %s3;
	ld.param.u32 %s5, [total];
	setp.ge.u32 %q1, %s4, %s5;
	@%q1 bra BA_DONE;
	ld.param.u32 %s6, [C];
	rem.u32 %s7, %s4, %s6;
	ld.param.u64 %d1, [y];
	cvta.to.global.u64 %d1, %d1;
	mul.wide.u32 %d2, %s4, 4;
	add.u64 %d3, %d1, %d2;
	ld.global.f32 %g1, [%d3];
	ld.param.u64 %d4, [bias];
	cvta.to.global.u64 %d4, %d4;
	mul.wide.u32 %d5, %s7, 4;
	add.u64 %d4, %d4, %d5;
	ld.global.f32 %g2, [%d4];
	add.f32 %g1, %g1, %g2;
	ld.param.u64 %d6, [skip];
	setp.eq.u64 %q2, %d6, 0;
	@%q2 bra BA_NOSKIP;
	cvta.to.global.u64 %d6, %d6;
	add.u64 %d6, %d6, %d2;
	ld.global.f32 %g3, [%d6];
	add.f32 %g1, %g1, %g3;
BA_NOSKIP:
	ld.param.u32 %s8, [relu];
	setp.eq.u32 %q3, %s8, 0;
	@%q3 bra BA_STORE;
	max.f32 %g1, %g1, 0f00000000;
BA_STORE:
	st.global.f32 [%d3], %g1;
BA_DONE:
	ret;
}

.visible .entry masklogits(
	.param .u64 x, .param .u64 legal, .param .u64 y, .param .u32 total)
{
	.reg .pred %q<3>;
	.reg .b32 %s<8>;
	.reg .b64 %d<8>;
	.reg .f32 %g<4>;

	mov.u32 %s1, %ctaid.x;
	mov.u32 %s2, %ntid.x;
	mov.u32 %s3, %tid.x;
	mad.lo.u32 %s4, %s1, %s2, %s3;
	ld.param.u32 %s5, [total];
	setp.ge.u32 %q1, %s4, %s5;
	@%q1 bra ML_DONE;
	mul.wide.u32 %d1, %s4, 4;
	ld.param.u64 %d2, [x];
	cvta.to.global.u64 %d2, %d2;
	add.u64 %d2, %d2, %d1;
	ld.global.f32 %g1, [%d2];
	ld.param.u64 %d3, [legal];
	cvta.to.global.u64 %d3, %d3;
	add.u64 %d3, %d3, %d1;
	ld.global.f32 %g2, [%d3];
	setp.eq.f32 %q2, %g2, 0f00000000;
	@%q2 mov.f32 %g1, 0fC61C4000;
	ld.param.u64 %d4, [y];
	cvta.to.global.u64 %d4, %d4;
	add.u64 %d4, %d4, %d1;
	st.global.f32 [%d4], %g1;
ML_DONE:
	ret;
}

.visible .entry rowscale(
	.param .u64 x, .param .u64 s, .param .u64 y, .param .u32 total, .param .u32 cols)
{
	.reg .pred %q<2>;
	.reg .b32 %s<8>;
	.reg .b64 %d<8>;
	.reg .f32 %g<4>;

	mov.u32 %s1, %ctaid.x;
	mov.u32 %s2, %ntid.x;
	mov.u32 %s3, %tid.x;
	mad.lo.u32 %s4, %s1, %s2, %s3;
	ld.param.u32 %s5, [total];
	setp.ge.u32 %q1, %s4, %s5;
	@%q1 bra RS_DONE;
	ld.param.u32 %s6, [cols];
	div.u32 %s7, %s4, %s6;
	mul.wide.u32 %d1, %s4, 4;
	ld.param.u64 %d2, [x];
	cvta.to.global.u64 %d2, %d2;
	add.u64 %d2, %d2, %d1;
	ld.global.f32 %g1, [%d2];
	ld.param.u64 %d3, [s];
	cvta.to.global.u64 %d3, %d3;
	mul.wide.u32 %d5, %s7, 4;
	add.u64 %d3, %d3, %d5;
	ld.global.f32 %g2, [%d3];
	mul.rn.f32 %g1, %g1, %g2;
	ld.param.u64 %d4, [y];
	cvta.to.global.u64 %d4, %d4;
	add.u64 %d4, %d4, %d1;
	st.global.f32 [%d4], %g1;
RS_DONE:
	ret;
}

.visible .entry softgrad(
	.param .u64 p, .param .u64 t, .param .u64 rows, .param .u64 legal, .param .u64 d,
	.param .u32 total, .param .u32 cols)
{
	.reg .pred %q<3>;
	.reg .b32 %s<8>;
	.reg .b64 %d<10>;
	.reg .f32 %g<6>;

	mov.u32 %s1, %ctaid.x;
	mov.u32 %s2, %ntid.x;
	mov.u32 %s3, %tid.x;
	mad.lo.u32 %s4, %s1, %s2, %s3;
	ld.param.u32 %s5, [total];
	setp.ge.u32 %q1, %s4, %s5;
	@%q1 bra SG_DONE;
	ld.param.u32 %s6, [cols];
	div.u32 %s7, %s4, %s6;
	mul.wide.u32 %d1, %s4, 4;
	ld.param.u64 %d2, [p];
	cvta.to.global.u64 %d2, %d2;
	add.u64 %d2, %d2, %d1;
	ld.global.f32 %g1, [%d2];
	ld.param.u64 %d3, [t];
	cvta.to.global.u64 %d3, %d3;
	add.u64 %d3, %d3, %d1;
	ld.global.f32 %g2, [%d3];
	ld.param.u64 %d4, [rows];
	cvta.to.global.u64 %d4, %d4;
	mul.wide.u32 %d5, %s7, 4;
	add.u64 %d4, %d4, %d5;
	ld.global.f32 %g3, [%d4];
	mul.rn.f32 %g1, %g1, %g3;
	sub.rn.f32 %g1, %g1, %g2;
	ld.param.u64 %d6, [legal];
	setp.eq.u64 %q2, %d6, 0;
	@%q2 bra SG_STORE;
	cvta.to.global.u64 %d6, %d6;
	add.u64 %d6, %d6, %d1;
	ld.global.f32 %g4, [%d6];
	mul.rn.f32 %g1, %g1, %g4;
SG_STORE:
	ld.param.u64 %d7, [d];
	cvta.to.global.u64 %d7, %d7;
	add.u64 %d7, %d7, %d1;
	st.global.f32 [%d7], %g1;
SG_DONE:
	ret;
}

.visible .entry sgd(
	.param .u64 w, .param .u64 v, .param .u64 g, .param .u32 total, .param .u32 decayEnd,
	.param .f32 lr, .param .f32 mu, .param .f32 decay)
{
	.reg .pred %q<3>;
	.reg .b32 %s<8>;
	.reg .b64 %d<8>;
	.reg .f32 %g<10>;

	mov.u32 %s1, %ctaid.x;
	mov.u32 %s2, %ntid.x;
	mov.u32 %s3, %tid.x;
	mad.lo.u32 %s4, %s1, %s2, %s3;
	ld.param.u32 %s5, [total];
	setp.ge.u32 %q1, %s4, %s5;
	@%q1 bra SGD_DONE;
	mul.wide.u32 %d1, %s4, 4;
	ld.param.u64 %d2, [w];
	cvta.to.global.u64 %d2, %d2;
	add.u64 %d2, %d2, %d1;
	ld.global.f32 %g1, [%d2];
	ld.param.u64 %d3, [v];
	cvta.to.global.u64 %d3, %d3;
	add.u64 %d3, %d3, %d1;
	ld.global.f32 %g2, [%d3];
	ld.param.u64 %d4, [g];
	cvta.to.global.u64 %d4, %d4;
	add.u64 %d4, %d4, %d1;
	ld.global.f32 %g3, [%d4];
	ld.param.f32 %g4, [lr];
	ld.param.f32 %g5, [mu];
	ld.param.f32 %g6, [decay];
	ld.param.u32 %s6, [decayEnd];
	setp.ge.u32 %q2, %s4, %s6;
	@%q2 mov.f32 %g6, 0f00000000;
	mul.rn.f32 %g7, %g5, %g2;
	add.rn.f32 %g7, %g7, %g3;
	mul.rn.f32 %g8, %g6, %g1;
	add.rn.f32 %g7, %g7, %g8;
	mul.rn.f32 %g9, %g4, %g7;
	sub.rn.f32 %g1, %g1, %g9;
	st.global.f32 [%d3], %g7;
	st.global.f32 [%d2], %g1;
SGD_DONE:
	ret;
}
`
