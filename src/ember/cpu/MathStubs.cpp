// Definitions of the elementwise math dispatch stubs (see MathStubs.h).
#include "ember/cpu/MathStubs.h"
#include "ember/cpu/AttentionStubs.h"

namespace ember::cpu {

EMBER_DEFINE_DISPATCH(AttnSoftmaxFn, attn_softmax_stub);
EMBER_DEFINE_DISPATCH(AttnProbsFn, attn_probs_stub);
EMBER_DEFINE_DISPATCH(AttnScoreGradFn, attn_score_grad_stub);
EMBER_DEFINE_DISPATCH(IterFn, div_trunc_stub);
EMBER_DEFINE_DISPATCH(PowScalarFn, pow_tensor_scalar_stub);
EMBER_DEFINE_DISPATCH(RoundDecimalsFn, round_decimals_stub);
EMBER_DEFINE_DISPATCH(ClampScalarFn, clamp_scalar_stub);
EMBER_DEFINE_DISPATCH(IterFn, clamp_tensor_stub);
EMBER_DEFINE_DISPATCH(IterFn, where_stub);
EMBER_DEFINE_DISPATCH(LerpScalarFn, lerp_scalar_stub);
EMBER_DEFINE_DISPATCH(IterFn, lerp_tensor_stub);
EMBER_DEFINE_DISPATCH(GeluBackwardFn, gelu_backward_stub);

}  // namespace ember::cpu
