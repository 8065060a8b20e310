# ruff: noqa: E501  (one signature a line, as PyTorch writes them)
"""PyTorch's call signatures of the functions Ember writes in Python.

In the notation of the argument parser of ``ember._C`` (that of PyTorch's
operator schemas): ``ember._argtypes`` checks a call against these before the
function runs, so a wrong argument type raises PyTorch's TypeError. Overloads
are listed as PyTorch binds them.
"""

# fmt: off

FUNCTIONS = {
    'adaptive_avg_pool1d': [
        "adaptive_avg_pool1d(Tensor input, int[1] output_size, *, Tensor? out=None)",
    ],
    'adaptive_max_pool1d': [
        "adaptive_max_pool1d(Tensor input, int[1] output_size)",
    ],
    'addr': [
        "addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None)",
    ],
    'affine_grid_generator': [
        "affine_grid_generator(Tensor theta, int[] size, bool align_corners, *, Tensor? out=None)",
    ],
    'alias_copy': [
        "alias_copy(Tensor input, *, Tensor? out=None)",
    ],
    'allclose': [
        "allclose(Tensor input, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False)",
    ],
    'alpha_dropout': [
        "alpha_dropout(Tensor input, float p, bool train)",
    ],
    'alpha_dropout_': [
        "alpha_dropout_(Tensor input, float p, bool train)",
    ],
    'aminmax': [
        "aminmax(Tensor input, *, int? dim=None, bool keepdim=False, Tensor[]? out=None)",
    ],
    'as_strided_copy': [
        "as_strided_copy(Tensor input, int[] size, int[] stride, SymInt? storage_offset=None, *, Tensor? out=None)",
    ],
    'as_strided_scatter': [
        "as_strided_scatter(Tensor input, Tensor src, int[] size, int[] stride, SymInt? storage_offset=None, *, Tensor? out=None)",
    ],
    'as_tensor': [
        "as_tensor(object data, *, ScalarType? dtype=None, Device? device=None)",
    ],
    'asarray': [
        "asarray(object obj, *, ScalarType? dtype=None, Device? device=None, bool? copy=None, bool requires_grad=False)",
    ],
    'avg_pool1d': [
        "avg_pool1d(Tensor input, int[1] kernel_size, int[1] stride=0, int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True, *, Tensor? out=None)",
    ],
    'bartlett_window': [
        "bartlett_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "bartlett_window(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'batch_norm_backward_elemt': [
        "batch_norm_backward_elemt(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, Tensor sum_dy, Tensor sum_dy_xmu, Tensor count)",
    ],
    'batch_norm_backward_reduce': [
        "batch_norm_backward_reduce(Tensor grad_out, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, bool input_g, bool weight_g, bool bias_g)",
    ],
    'batch_norm_elemt': [
        "batch_norm_elemt(Tensor input, Tensor? weight, Tensor? bias, Tensor mean, Tensor invstd, float eps, *, Tensor? out=None)",
    ],
    'batch_norm_gather_stats': [
        "batch_norm_gather_stats(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, float momentum, float eps, int count)",
    ],
    'batch_norm_gather_stats_with_counts': [
        "batch_norm_gather_stats_with_counts(Tensor input, Tensor mean, Tensor invstd, Tensor? running_mean, Tensor? running_var, float momentum, float eps, Tensor counts)",
    ],
    'batch_norm_stats': [
        "batch_norm_stats(Tensor input, float eps)",
    ],
    'batch_norm_update_stats': [
        "batch_norm_update_stats(Tensor input, Tensor? running_mean, Tensor? running_var, float momentum)",
    ],
    'bilinear': [
        "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)",
    ],
    'binary_cross_entropy_with_logits': [
        "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1, *, Tensor? out=None)",
    ],
    'blackman_window': [
        "blackman_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "blackman_window(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'broadcast_to': [
        "broadcast_to(Tensor input, int[] size)",
    ],
    'bucketize': [
        "bucketize(Tensor input, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor? out=None)",
        "bucketize(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor? out=None)",
    ],
    'can_cast': [
        "can_cast(ScalarType from_, ScalarType to)",
    ],
    'channel_shuffle': [
        "channel_shuffle(Tensor input, SymInt groups, *, Tensor? out=None)",
    ],
    'cholesky': [
        "cholesky(Tensor input, bool upper=False, *, Tensor? out=None)",
    ],
    'cholesky_inverse': [
        "cholesky_inverse(Tensor input, bool upper=False, *, Tensor? out=None)",
    ],
    'cholesky_solve': [
        "cholesky_solve(Tensor input, Tensor input2, bool upper=False, *, Tensor? out=None)",
    ],
    'column_stack': [
        "column_stack(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'combinations': [
        "combinations(Tensor input, int r=2, bool with_replacement=False)",
    ],
    'conv3d': [
        "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, int[3] padding=0, int[3] dilation=0, SymInt groups=1)",
        "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, str padding=\"valid\", int[3] dilation=0, SymInt groups=1)",
    ],
    'conv_tbc': [
        "conv_tbc(Tensor input, Tensor weight, Tensor bias, int pad=0, *, Tensor? out=None)",
    ],
    'conv_transpose1d': [
        "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=0, int[1] padding=0, int[1] output_padding=0, SymInt groups=1, int[1] dilation=0)",
    ],
    'conv_transpose3d': [
        "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, int[3] padding=0, int[3] output_padding=0, SymInt groups=1, int[3] dilation=0)",
    ],
    'corrcoef': [
        "corrcoef(Tensor input)",
    ],
    'cosine_embedding_loss': [
        "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1)",
    ],
    'cosine_similarity': [
        "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)",
    ],
    'count_nonzero': [
        "count_nonzero(Tensor input, int[] dim, *, Tensor? out=None)",
        "count_nonzero(Tensor input, int? dim=None, *, Tensor? out=None)",
    ],
    'cov': [
        "cov(Tensor input, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None)",
    ],
    'cross': [
        "cross(Tensor input, Tensor other, int? dim=None, *, Tensor? out=None)",
    ],
    'ctc_loss': [
        "ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, int reduction=1, bool zero_infinity=False)",
        "ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, int reduction=1, bool zero_infinity=False)",
    ],
    'cummax': [
        "cummax(Tensor input, int dim, *, Tensor[]? out=None)",
    ],
    'cummin': [
        "cummin(Tensor input, int dim, *, Tensor[]? out=None)",
    ],
    'cumulative_trapezoid': [
        "cumulative_trapezoid(Tensor y, Tensor x, *, int dim=-1)",
        "cumulative_trapezoid(Tensor y, *, Scalar dx=1, int dim=-1)",
    ],
    'det': [
        "det(Tensor input)",
    ],
    'detach': [
        "detach(Tensor input)",
    ],
    'detach_copy': [
        "detach_copy(Tensor input, *, Tensor? out=None)",
    ],
    'diag': [
        "diag(Tensor input, int diagonal=0, *, Tensor? out=None)",
    ],
    'diag_embed': [
        "diag_embed(Tensor input, int offset=0, int dim1=-2, int dim2=-1, *, Tensor? out=None)",
    ],
    'diagflat': [
        "diagflat(Tensor input, int offset=0)",
    ],
    'diagonal_copy': [
        "diagonal_copy(Tensor input, int offset=0, int dim1=0, int dim2=1, *, Tensor? out=None)",
    ],
    'diagonal_scatter': [
        "diagonal_scatter(Tensor input, Tensor src, int offset=0, int dim1=0, int dim2=1, *, Tensor? out=None)",
    ],
    'diff': [
        "diff(Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor? out=None)",
    ],
    'dist': [
        "dist(Tensor input, Tensor other, Scalar p=2, *, Tensor? out=None)",
    ],
    'dropout': [
        "dropout(Tensor input, float p, bool train)",
    ],
    'dropout_': [
        "dropout_(Tensor input, float p, bool train)",
    ],
    'dsplit': [
        "dsplit(Tensor input, int sections)",
        "dsplit(Tensor input, int[] indices)",
    ],
    'dstack': [
        "dstack(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'equal': [
        "equal(Tensor input, Tensor other)",
    ],
    'expand_copy': [
        "expand_copy(Tensor input, int[] size, *, bool implicit=False, Tensor? out=None)",
    ],
    'feature_alpha_dropout': [
        "feature_alpha_dropout(Tensor input, float p, bool train)",
    ],
    'feature_alpha_dropout_': [
        "feature_alpha_dropout_(Tensor input, float p, bool train)",
    ],
    'feature_dropout': [
        "feature_dropout(Tensor input, float p, bool train)",
    ],
    'feature_dropout_': [
        "feature_dropout_(Tensor input, float p, bool train)",
    ],
    'fill': [
        "fill(Tensor input, Scalar value, *, Tensor? out=None)",
        "fill(Tensor input, Tensor value, *, Tensor? out=None)",
    ],
    'float_power': [
        "float_power(Tensor input, Tensor exponent, *, Tensor? out=None)",
        "float_power(Scalar self, Tensor exponent, *, Tensor? out=None)",
        "float_power(Tensor input, Scalar exponent, *, Tensor? out=None)",
    ],
    'frexp': [
        "frexp(Tensor input, *, Tensor[]? out=None)",
        "frexp(float a)",
    ],
    'frobenius_norm': [
        "frobenius_norm(Tensor input, int[1] dim, bool keepdim=False, *, Tensor? out=None)",
    ],
    'gcd': [
        "gcd(Tensor input, Tensor other, *, Tensor? out=None)",
        "gcd(int a, int b)",
    ],
    'gcd_': [
        "gcd_(Tensor input, Tensor other)",
    ],
    'geqrf': [
        "geqrf(Tensor input, *, Tensor[]? out=None)",
    ],
    'ger': [
        "ger(Tensor input, Tensor vec2, *, Tensor? out=None)",
    ],
    'get_autocast_dtype': [
        "get_autocast_dtype(str device_type)",
    ],
    'get_device': [
        "get_device(Tensor input)",
    ],
    'gradient': [
        "gradient(Tensor input, *, int[] dim, int edge_order=1)",
        "gradient(Tensor input, *, Scalar spacing, int[] dim, int edge_order=1)",
        "gradient(Tensor input, *, Scalar? spacing=None, int? dim=None, int edge_order=1)",
        "gradient(Tensor input, *, Scalar[] spacing, int? dim=None, int edge_order=1)",
        "gradient(Tensor input, *, Scalar[] spacing, int[] dim, int edge_order=1)",
        "gradient(Tensor input, *, Tensor[] spacing, int? dim=None, int edge_order=1)",
        "gradient(Tensor input, *, Tensor[] spacing, int[] dim, int edge_order=1)",
    ],
    'grid_sampler': [
        "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners)",
    ],
    'grid_sampler_2d': [
        "grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, *, Tensor? out=None)",
    ],
    'grid_sampler_3d': [
        "grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners, *, Tensor? out=None)",
    ],
    'gru': [
        "gru(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first)",
        "gru(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional)",
    ],
    'gru_cell': [
        "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
    ],
    'hamming_window': [
        "hamming_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "hamming_window(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "hamming_window(int window_length, bool periodic, float alpha, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "hamming_window(int window_length, bool periodic, float alpha, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'hann_window': [
        "hann_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "hann_window(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'hardshrink': [
        "hardshrink(Tensor input, Scalar lambd=0.5, *, Tensor? out=None)",
    ],
    'heaviside': [
        "heaviside(Tensor input, Tensor values, *, Tensor? out=None)",
    ],
    'hinge_embedding_loss': [
        "hinge_embedding_loss(Tensor input, Tensor target, float margin=1., int reduction=1)",
    ],
    'histogram': [
        "histogram(Tensor input, Tensor bins, *, Tensor? weight=None, bool density=False, Tensor[]? out=None)",
        "histogram(Tensor input, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False, Tensor[]? out=None)",
    ],
    'hsplit': [
        "hsplit(Tensor input, int sections)",
        "hsplit(Tensor input, int[] indices)",
    ],
    'hstack': [
        "hstack(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'inner': [
        "inner(Tensor input, Tensor other, *, Tensor? out=None)",
    ],
    'instance_norm': [
        "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled)",
    ],
    'inverse': [
        "inverse(Tensor input, *, Tensor? out=None)",
    ],
    'is_autocast_cpu_enabled': [
        "is_autocast_cpu_enabled()",
    ],
    'is_autocast_enabled': [
        "is_autocast_enabled()",
        "is_autocast_enabled(str device_type)",
    ],
    'is_complex': [
        "is_complex(Tensor input)",
    ],
    'is_conj': [
        "is_conj(Tensor input)",
    ],
    'is_floating_point': [
        "is_floating_point(Tensor input)",
    ],
    'is_neg': [
        "is_neg(Tensor input)",
    ],
    'is_nonzero': [
        "is_nonzero(Tensor input)",
    ],
    'is_same_size': [
        "is_same_size(Tensor input, Tensor other)",
    ],
    'is_signed': [
        "is_signed(Tensor input)",
    ],
    'isin': [
        "isin(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor? out=None)",
        "isin(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False, Tensor? out=None)",
        "isin(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor? out=None)",
    ],
    'isneginf': [
        "isneginf(Tensor input, *, Tensor? out=None)",
    ],
    'isposinf': [
        "isposinf(Tensor input, *, Tensor? out=None)",
    ],
    'isreal': [
        "isreal(Tensor input)",
    ],
    'embedding_bag': [
        "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx)",
        "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False)",
    ],
    'kaiser_window': [
        "kaiser_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "kaiser_window(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
        "kaiser_window(int window_length, bool periodic, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'kl_div': [
        "kl_div(Tensor input, Tensor target, int reduction=1, *, bool log_target=False)",
    ],
    'kron': [
        "kron(Tensor input, Tensor other, *, Tensor? out=None)",
    ],
    'lcm': [
        "lcm(Tensor input, Tensor other, *, Tensor? out=None)",
    ],
    'lcm_': [
        "lcm_(Tensor input, Tensor other)",
    ],
    'logcumsumexp': [
        "logcumsumexp(Tensor input, int dim, *, Tensor? out=None)",
    ],
    'logdet': [
        "logdet(Tensor input)",
    ],
    'lstm': [
        "lstm(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first)",
        "lstm(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional)",
    ],
    'lstm_cell': [
        "lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
    ],
    'lu_solve': [
        "lu_solve(Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor? out=None)",
    ],
    'lu_unpack': [
        "lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, Tensor[]? out=None)",
    ],
    'margin_ranking_loss': [
        "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1)",
    ],
    'matrix_exp': [
        "matrix_exp(Tensor input)",
    ],
    'matrix_power': [
        "matrix_power(Tensor input, int n, *, Tensor? out=None)",
    ],
    'max_pool1d': [
        "max_pool1d(Tensor input, int[1] kernel_size, int[1] stride=0, int[1] padding=0, int[1] dilation=0, bool ceil_mode=False)",
    ],
    'max_pool1d_with_indices': [
        "max_pool1d_with_indices(Tensor input, int[1] kernel_size, int[1] stride=0, int[1] padding=0, int[1] dilation=0, bool ceil_mode=False)",
    ],
    'max_pool3d': [
        "max_pool3d(Tensor input, int[3] kernel_size, int[3] stride=0, int[3] padding=0, int[3] dilation=0, bool ceil_mode=False)",
    ],
    'mode': [
        "mode(Tensor input, int dim=-1, bool keepdim=False, *, Tensor[]? out=None)",
    ],
    'msort': [
        "msort(Tensor input, *, Tensor? out=None)",
    ],
    'nanmean': [
        "nanmean(Tensor input, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
    ],
    'nanquantile': [
        "nanquantile(Tensor input, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
        "nanquantile(Tensor input, float q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
    ],
    'narrow_copy': [
        "narrow_copy(Tensor input, int dim, SymInt start, SymInt length, *, Tensor? out=None)",
    ],
    'native_channel_shuffle': [
        "native_channel_shuffle(Tensor input, SymInt groups)",
    ],
    'native_dropout': [
        "native_dropout(Tensor input, float p, bool? train, *, Tensor[]? out=None)",
    ],
    'native_norm': [
        "native_norm(Tensor input, Scalar p=2, *, Tensor? out=None)",
        "native_norm(Tensor input, Scalar? p, int[1] dim, bool keepdim, ScalarType? dtype, *, Tensor? out=None)",
    ],
    'nextafter': [
        "nextafter(Tensor input, Tensor other, *, Tensor? out=None)",
    ],
    'nonzero': [
        "nonzero(Tensor input, *, bool as_tuple=False, Tensor? out=None)",
    ],
    'norm_except_dim': [
        "norm_except_dim(Tensor v, int pow=2, int dim=0)",
    ],
    'nuclear_norm': [
        "nuclear_norm(Tensor input, bool keepdim=False, *, Tensor? out=None)",
        "nuclear_norm(Tensor input, int[2] dim, bool keepdim=False, *, Tensor? out=None)",
    ],
    'numel': [
        "numel(Tensor input)",
    ],
    'orgqr': [
        "orgqr(Tensor input, Tensor input2, *, Tensor? out=None)",
    ],
    'ormqr': [
        "ormqr(Tensor input, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor? out=None)",
    ],
    'outer': [
        "outer(Tensor input, Tensor vec2, *, Tensor? out=None)",
    ],
    'pairwise_distance': [
        "pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False)",
    ],
    'pdist': [
        "pdist(Tensor input, float p=2.)",
    ],
    'permute_copy': [
        "permute_copy(Tensor input, int[] dims, *, Tensor? out=None)",
    ],
    'pinverse': [
        "pinverse(Tensor input, float rcond=1.0000000000000001e-15)",
    ],
    'pixel_shuffle': [
        "pixel_shuffle(Tensor input, int upscale_factor, *, Tensor? out=None)",
    ],
    'pixel_unshuffle': [
        "pixel_unshuffle(Tensor input, int downscale_factor, *, Tensor? out=None)",
    ],
    'poisson_nll_loss': [
        "poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction)",
    ],
    'positive': [
        "positive(Tensor input)",
    ],
    'prelu': [
        "prelu(Tensor input, Tensor weight)",
    ],
    'qr': [
        "qr(Tensor input, bool some=True, *, Tensor[]? out=None)",
    ],
    'quantile': [
        "quantile(Tensor input, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
        "quantile(Tensor input, float q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
    ],
    'range': [
        "range(Scalar start, Scalar end, Scalar step=1, *, Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'ravel': [
        "ravel(Tensor input)",
    ],
    'renorm': [
        "renorm(Tensor input, Scalar p, int dim, Scalar maxnorm, *, Tensor? out=None)",
    ],
    'result_type': [
        "result_type(Tensor tensor, Tensor other)",
        "result_type(Tensor tensor, Scalar other)",
        "result_type(Scalar scalar, Tensor tensor)",
        "result_type(Scalar scalar1, Scalar scalar2)",
    ],
    'rms_norm': [
        "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None)",
    ],
    'rnn_relu': [
        "rnn_relu(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first)",
        "rnn_relu(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional)",
    ],
    'rnn_relu_cell': [
        "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
    ],
    'rnn_tanh': [
        "rnn_tanh(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first)",
        "rnn_tanh(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional)",
    ],
    'rnn_tanh_cell': [
        "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
    ],
    'rot90': [
        "rot90(Tensor input, int k=1, int[] dims=0, *, Tensor? out=None)",
    ],
    'row_stack': [
        "row_stack(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'rrelu': [
        "rrelu(Tensor input, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None)",
    ],
    'rrelu_': [
        "rrelu_(Tensor input, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None)",
    ],
    'select_copy': [
        "select_copy(Tensor input, int dim, SymInt index, *, Tensor? out=None)",
    ],
    'select_scatter': [
        "select_scatter(Tensor input, Tensor src, int dim, SymInt index, *, Tensor? out=None)",
    ],
    'slice_copy': [
        "slice_copy(Tensor input, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor? out=None)",
    ],
    'slice_inverse': [
        "slice_inverse(Tensor input, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)",
    ],
    'slice_scatter': [
        "slice_scatter(Tensor input, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor? out=None)",
    ],
    'slogdet': [
        "slogdet(Tensor input, *, Tensor[]? out=None)",
    ],
    'dsmm': [
        "mm(Tensor input, Tensor mat2, *, Tensor? out=None)",
    ],
    'hspmm': [
        "hspmm(Tensor mat1, Tensor mat2, *, Tensor? out=None)",
    ],
    'resize_as_sparse_': [
        "resize_as_sparse_(Tensor input, Tensor the_template)",
    ],
    'smm': [
        "smm(Tensor input, Tensor mat2)",
    ],
    'sparse_bsc_tensor': [
        "sparse_bsc_tensor(object ccol_indices, object row_indices, object values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
        "sparse_bsc_tensor(object ccol_indices, object row_indices, object values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sparse_bsr_tensor': [
        "sparse_bsr_tensor(object crow_indices, object col_indices, object values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
        "sparse_bsr_tensor(object crow_indices, object col_indices, object values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sparse_compressed_tensor': [
        "sparse_compressed_tensor(object compressed_indices, object plain_indices, object values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
        "sparse_compressed_tensor(object compressed_indices, object plain_indices, object values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sparse_csc_tensor': [
        "sparse_csc_tensor(object ccol_indices, object row_indices, object values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
        "sparse_csc_tensor(object ccol_indices, object row_indices, object values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sparse_csr_tensor': [
        "sparse_csr_tensor(object crow_indices, object col_indices, object values, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
        "sparse_csr_tensor(object crow_indices, object col_indices, object values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sparse_coo_tensor': [
        "sparse_coo_tensor(object indices, object values, *, ScalarType? dtype=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None, bool? is_coalesced=None)",
        "sparse_coo_tensor(object indices, object values, int[] size, *, ScalarType? dtype=None, Device? device=None, bool pin_memory=False, bool requires_grad=False, bool? check_invariants=None, bool? is_coalesced=None)",
        "sparse_coo_tensor(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, bool? check_invariants=None)",
    ],
    'sspaddmm': [
        "sspaddmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None)",
    ],
    'split_copy': [
        "split_copy(Tensor input, SymInt split_size, int dim=0, *, Tensor? out=None)",
    ],
    'split_with_sizes_copy': [
        "split_with_sizes_copy(Tensor input, int[] split_sizes, int dim=0, *, Tensor? out=None)",
    ],
    'squeeze_copy': [
        "squeeze_copy(Tensor input, *, Tensor? out=None)",
        "squeeze_copy(Tensor input, int dim, *, Tensor? out=None)",
        "squeeze_copy(Tensor input, int[] dim, *, Tensor? out=None)",
    ],
    'svd': [
        "svd(Tensor input, bool some=True, bool compute_uv=True, *, Tensor[]? out=None)",
    ],
    't_copy': [
        "t_copy(Tensor input, *, Tensor? out=None)",
    ],
    'take_along_dim': [
        "take_along_dim(Tensor input, Tensor indices, int? dim=None, *, Tensor? out=None)",
    ],
    'tensor': [
        "tensor(object data, *, ScalarType? dtype=None, Device? device=None, bool pin_memory=False, bool requires_grad=False)",
    ],
    'transpose_copy': [
        "transpose_copy(Tensor input, int dim0, int dim1, *, Tensor? out=None)",
    ],
    'trapezoid': [
        "trapezoid(Tensor y, Tensor x, *, int dim=-1)",
        "trapezoid(Tensor y, *, Scalar dx=1, int dim=-1)",
    ],
    'trapz': [
        "trapz(Tensor y, Tensor x, *, int dim=-1)",
        "trapz(Tensor y, *, float dx=1., int dim=-1)",
    ],
    'triangular_solve': [
        "triangular_solve(Tensor input, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *, Tensor[]? out=None)",
    ],
    'tril_indices': [
        "tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'triplet_margin_loss': [
        "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., float eps=9.9999999999999995e-07, bool swap=False, int reduction=1)",
    ],
    'triu_indices': [
        "triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'unbind_copy': [
        "unbind_copy(Tensor input, int dim=0, *, Tensor? out=None)",
    ],
    'unfold_copy': [
        "unfold_copy(Tensor input, int dimension, int size, int step, *, Tensor? out=None)",
    ],
    'unsafe_chunk': [
        "unsafe_chunk(Tensor input, int chunks, int dim=0)",
    ],
    'unsafe_split': [
        "unsafe_split(Tensor input, SymInt split_size, int dim=0, *, Tensor? out=None)",
    ],
    'unsafe_split_with_sizes': [
        "unsafe_split_with_sizes(Tensor input, int[] split_sizes, int dim=0, *, Tensor? out=None)",
    ],
    'unsqueeze_copy': [
        "unsqueeze_copy(Tensor input, int dim, *, Tensor? out=None)",
    ],
    'vander': [
        "vander(Tensor x, int? N=None, bool increasing=False)",
    ],
    'view_copy': [
        "view_copy(Tensor input, int[] size, *, Tensor? out=None)",
        "view_copy(Tensor input, ScalarType dtype, *, Tensor? out=None)",
    ],
    'vsplit': [
        "vsplit(Tensor input, int sections)",
        "vsplit(Tensor input, int[] indices)",
    ],
    'vstack': [
        "vstack(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'index_reduce': [
        "index_reduce(Tensor input, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True, Tensor? out=None)",
    ],
    'nonzero_static': [
        "nonzero_static(Tensor input, *, SymInt size, int fill_value=-1, Tensor? out=None)",
    ],
    'segment_reduce': [
        "segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None)",
    ],
    'empty_permuted': [
        "empty_permuted(int[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
}

METHODS = {
    'broadcast_to': [
        "broadcast_to(int[] size)",
    ],
    'addr': [
        "addr(Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor? out=None)",
    ],
    'addr_': [
        "addr_(Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)",
    ],
    'adjoint': [
        "adjoint()",
    ],
    'allclose': [
        "allclose(Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False)",
    ],
    'aminmax': [
        "aminmax(*, int? dim=None, bool keepdim=False, Tensor[]? out=None)",
    ],
    'as_strided_scatter': [
        "as_strided_scatter(Tensor src, int[] size, int[] stride, SymInt? storage_offset=None, *, Tensor? out=None)",
    ],
    'cholesky': [
        "cholesky(bool upper=False, *, Tensor? out=None)",
    ],
    'cholesky_inverse': [
        "cholesky_inverse(bool upper=False, *, Tensor? out=None)",
    ],
    'cholesky_solve': [
        "cholesky_solve(Tensor input2, bool upper=False, *, Tensor? out=None)",
    ],
    'corrcoef': [
        "corrcoef()",
    ],
    'count_nonzero': [
        "count_nonzero(int[] dim, *, Tensor? out=None)",
        "count_nonzero(int? dim=None, *, Tensor? out=None)",
    ],
    'cov': [
        "cov(*, int correction=1, Tensor? fweights=None, Tensor? aweights=None)",
    ],
    'cross': [
        "cross(Tensor other, int? dim=None, *, Tensor? out=None)",
    ],
    'cummax': [
        "cummax(int dim, *, Tensor[]? out=None)",
    ],
    'cummin': [
        "cummin(int dim, *, Tensor[]? out=None)",
    ],
    'det': [
        "det()",
    ],
    'diag_embed': [
        "diag_embed(int offset=0, int dim1=-2, int dim2=-1, *, Tensor? out=None)",
    ],
    'diagflat': [
        "diagflat(int offset=0)",
    ],
    'diagonal_scatter': [
        "diagonal_scatter(Tensor src, int offset=0, int dim1=0, int dim2=1, *, Tensor? out=None)",
    ],
    'diff': [
        "diff(int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor? out=None)",
    ],
    'dist': [
        "dist(Tensor other, Scalar p=2, *, Tensor? out=None)",
    ],
    'dsplit': [
        "dsplit(int sections)",
        "dsplit(int[] indices)",
    ],
    'equal': [
        "equal(Tensor other)",
    ],
    'fill_diagonal_': [
        "fill_diagonal_(Scalar fill_value, bool wrap=False)",
    ],
    'float_power': [
        "float_power(Tensor exponent, *, Tensor? out=None)",
        "float_power(Scalar exponent, *, Tensor? out=None)",
    ],
    'float_power_': [
        "float_power_(Tensor exponent)",
        "float_power_(Scalar exponent)",
    ],
    'frexp': [
        "frexp(*, Tensor[]? out=None)",
    ],
    'gcd': [
        "gcd(Tensor other, *, Tensor? out=None)",
    ],
    'gcd_': [
        "gcd_(Tensor other)",
    ],
    'geqrf': [
        "geqrf(*, Tensor[]? out=None)",
    ],
    'hardshrink': [
        "hardshrink(Scalar lambd=0.5, *, Tensor? out=None)",
    ],
    'heaviside': [
        "heaviside(Tensor values, *, Tensor? out=None)",
    ],
    'heaviside_': [
        "heaviside_(Tensor values)",
    ],
    'histogram': [
        "histogram(Tensor bins, *, Tensor? weight=None, bool density=False, Tensor[]? out=None)",
        "histogram(int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False, Tensor[]? out=None)",
    ],
    'hsplit': [
        "hsplit(int sections)",
        "hsplit(int[] indices)",
    ],
    'inner': [
        "inner(Tensor other, *, Tensor? out=None)",
    ],
    'inverse': [
        "inverse(*, Tensor? out=None)",
    ],
    'isneginf': [
        "isneginf(*, Tensor? out=None)",
    ],
    'isposinf': [
        "isposinf(*, Tensor? out=None)",
    ],
    'isreal': [
        "isreal()",
    ],
    'kron': [
        "kron(Tensor other, *, Tensor? out=None)",
    ],
    'lcm': [
        "lcm(Tensor other, *, Tensor? out=None)",
    ],
    'lcm_': [
        "lcm_(Tensor other)",
    ],
    'logcumsumexp': [
        "logcumsumexp(int dim, *, Tensor? out=None)",
    ],
    'logdet': [
        "logdet()",
    ],
    'lu_solve': [
        "lu_solve(Tensor LU_data, Tensor LU_pivots, *, Tensor? out=None)",
    ],
    'matrix_exp': [
        "matrix_exp()",
    ],
    'matrix_power': [
        "matrix_power(int n, *, Tensor? out=None)",
    ],
    'mode': [
        "mode(int dim=-1, bool keepdim=False, *, Tensor[]? out=None)",
    ],
    'nanmean': [
        "nanmean(int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
    ],
    'nanquantile': [
        "nanquantile(Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
        "nanquantile(float q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
    ],
    'narrow_copy': [
        "narrow_copy(int dim, SymInt start, SymInt length, *, Tensor? out=None)",
    ],
    'new_empty_strided': [
        "new_empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False)",
    ],
    'nextafter': [
        "nextafter(Tensor other, *, Tensor? out=None)",
    ],
    'nextafter_': [
        "nextafter_(Tensor other)",
    ],
    'nonzero': [
        "nonzero(*, bool as_tuple=False, Tensor? out=None)",
    ],
    'orgqr': [
        "orgqr(Tensor input2, *, Tensor? out=None)",
    ],
    'ormqr': [
        "ormqr(Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor? out=None)",
    ],
    'pinverse': [
        "pinverse(float rcond=1.0000000000000001e-15)",
    ],
    'positive': [
        "positive()",
    ],
    'prelu': [
        "prelu(Tensor weight)",
    ],
    'qr': [
        "qr(bool some=True, *, Tensor[]? out=None)",
    ],
    'quantile': [
        "quantile(Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
        "quantile(float q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\", Tensor? out=None)",
    ],
    'renorm': [
        "renorm(Scalar p, int dim, Scalar maxnorm, *, Tensor? out=None)",
    ],
    'renorm_': [
        "renorm_(Scalar p, int dim, Scalar maxnorm)",
    ],
    'rot90': [
        "rot90(int k=1, int[] dims=0, *, Tensor? out=None)",
    ],
    'select_scatter': [
        "select_scatter(Tensor src, int dim, SymInt index, *, Tensor? out=None)",
    ],
    'slice_inverse': [
        "slice_inverse(Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)",
    ],
    'slice_scatter': [
        "slice_scatter(Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor? out=None)",
    ],
    'slogdet': [
        "slogdet(*, Tensor[]? out=None)",
    ],
    'sum_to_size': [
        "sum_to_size(int[] size)",
    ],
    'svd': [
        "svd(bool some=True, bool compute_uv=True, *, Tensor[]? out=None)",
    ],
    'triangular_solve': [
        "triangular_solve(Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *, Tensor[]? out=None)",
    ],
    'unsafe_chunk': [
        "unsafe_chunk(int chunks, int dim=0)",
    ],
    'unsafe_split': [
        "unsafe_split(SymInt split_size, int dim=0, *, Tensor? out=None)",
    ],
    'unsafe_split_with_sizes': [
        "unsafe_split_with_sizes(int[] split_sizes, int dim=0, *, Tensor? out=None)",
    ],
    'vsplit': [
        "vsplit(int sections)",
        "vsplit(int[] indices)",
    ],
    'index_reduce': [
        "index_reduce(int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True)",
    ],
    'index_reduce_': [
        "index_reduce_(int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True)",
    ],
    'nonzero_static': [
        "nonzero_static(*, SymInt size, int fill_value=-1)",
    ],
    'geometric_': [
        "geometric_(float p, *, Generator? generator=None)",
    ],
    'log_normal_': [
        "log_normal_(float mean=1, float std=2, *, Generator? generator=None)",
    ],
    'to_sparse_bsc': [
        "to_sparse_bsc(int[2] blocksize, int? dense_dim=None)",
    ],
    'to_sparse_bsr': [
        "to_sparse_bsr(int[2] blocksize, int? dense_dim=None)",
    ],
    'to_sparse_csc': [
        "to_sparse_csc(int? dense_dim=None)",
    ],
    'to_sparse_csr': [
        "to_sparse_csr(int? dense_dim=None)",
    ],
}

LINALG = {
    'cholesky': [
        "linalg_cholesky(Tensor input, *, bool upper=False, Tensor? out=None)",
    ],
    'cholesky_ex': [
        "linalg_cholesky_ex(Tensor input, *, bool upper=False, bool check_errors=False, Tensor[]? out=None)",
    ],
    'cond': [
        "linalg_cond(Tensor input, Scalar? p=None, *, Tensor? out=None)",
        "linalg_cond(Tensor input, str p, *, Tensor? out=None)",
    ],
    'cross': [
        "linalg_cross(Tensor input, Tensor other, *, int dim=-1, Tensor? out=None)",
    ],
    'det': [
        "linalg_det(Tensor A, *, Tensor? out=None)",
    ],
    'diagonal': [
        "linalg_diagonal(Tensor A, *, int offset=0, int dim1=-2, int dim2=-1)",
    ],
    'eig': [
        "linalg_eig(Tensor input, *, Tensor[]? out=None)",
    ],
    'eigh': [
        "linalg_eigh(Tensor input, str UPLO=\"L\", *, Tensor[]? out=None)",
    ],
    'eigvals': [
        "linalg_eigvals(Tensor input, *, Tensor? out=None)",
    ],
    'eigvalsh': [
        "linalg_eigvalsh(Tensor input, str UPLO=\"L\", *, Tensor? out=None)",
    ],
    'householder_product': [
        "linalg_householder_product(Tensor input, Tensor tau, *, Tensor? out=None)",
    ],
    'inv': [
        "linalg_inv(Tensor A, *, Tensor? out=None)",
    ],
    'inv_ex': [
        "linalg_inv_ex(Tensor A, *, bool check_errors=False, Tensor[]? out=None)",
    ],
    'ldl_factor': [
        "linalg_ldl_factor(Tensor input, *, bool hermitian=False, Tensor[]? out=None)",
    ],
    'ldl_factor_ex': [
        "linalg_ldl_factor_ex(Tensor input, *, bool hermitian=False, bool check_errors=False, Tensor[]? out=None)",
    ],
    'ldl_solve': [
        "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor? out=None)",
    ],
    'lstsq': [
        "linalg_lstsq(Tensor input, Tensor b, float? rcond=None, *, str? driver=None, Tensor[]? out=None)",
    ],
    'lu': [
        "linalg_lu(Tensor A, *, bool pivot=True, Tensor[]? out=None)",
    ],
    'lu_factor': [
        "linalg_lu_factor(Tensor A, *, bool pivot=True, Tensor[]? out=None)",
    ],
    'lu_factor_ex': [
        "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False, Tensor[]? out=None)",
    ],
    'lu_solve': [
        "linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, Tensor? out=None)",
    ],
    'matmul': [
        "linalg_matmul(Tensor input, Tensor other, *, Tensor? out=None)",
    ],
    'matrix_exp': [
        "linalg_matrix_exp(Tensor input)",
    ],
    'matrix_norm': [
        "linalg_matrix_norm(Tensor input, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
        "linalg_matrix_norm(Tensor input, str ord=\"fro\", int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
    ],
    'matrix_power': [
        "linalg_matrix_power(Tensor input, int n, *, Tensor? out=None)",
    ],
    'matrix_rank': [
        "linalg_matrix_rank(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor? out=None)",
        "linalg_matrix_rank(Tensor input, *, float? atol=None, float? rtol=None, bool hermitian=False, Tensor? out=None)",
        "linalg_matrix_rank(Tensor input, Tensor tol, bool hermitian=False, *, Tensor? out=None)",
        "linalg_matrix_rank(Tensor input, float tol, bool hermitian=False, *, Tensor? out=None)",
    ],
    'multi_dot': [
        "linalg_multi_dot(Tensor[] tensors, *, Tensor? out=None)",
    ],
    'norm': [
        "linalg_norm(Tensor input, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
        "linalg_norm(Tensor input, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
    ],
    'pinv': [
        "linalg_pinv(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor? out=None)",
        "linalg_pinv(Tensor input, *, float? atol=None, float? rtol=None, bool hermitian=False, Tensor? out=None)",
        "linalg_pinv(Tensor input, Tensor rcond, bool hermitian=False, *, Tensor? out=None)",
        "linalg_pinv(Tensor input, float rcond, bool hermitian=False, *, Tensor? out=None)",
    ],
    'qr': [
        "linalg_qr(Tensor A, str mode=\"reduced\", *, Tensor[]? out=None)",
    ],
    'slogdet': [
        "linalg_slogdet(Tensor A, *, Tensor[]? out=None)",
    ],
    'solve': [
        "linalg_solve(Tensor A, Tensor B, *, bool left=True, Tensor? out=None)",
    ],
    'solve_ex': [
        "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False, Tensor[]? out=None)",
    ],
    'solve_triangular': [
        "linalg_solve_triangular(Tensor input, Tensor B, *, bool upper, bool left=True, bool unitriangular=False, Tensor? out=None)",
    ],
    'svd': [
        "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None, Tensor[]? out=None)",
    ],
    'svdvals': [
        "linalg_svdvals(Tensor A, *, str? driver=None, Tensor? out=None)",
    ],
    'tensorinv': [
        "linalg_tensorinv(Tensor input, int ind=2, *, Tensor? out=None)",
    ],
    'tensorsolve': [
        "linalg_tensorsolve(Tensor input, Tensor other, int[]? dims=None, *, Tensor? out=None)",
    ],
    'vander': [
        "linalg_vander(Tensor x, *, SymInt? N=None)",
    ],
    'vecdot': [
        "linalg_vecdot(Tensor x, Tensor y, *, int dim=-1, Tensor? out=None)",
    ],
    'vector_norm': [
        "linalg_vector_norm(Tensor input, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor? out=None)",
    ],
}

FFT = {
    'fft': [
        "fft_fft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'fft2': [
        "fft_fft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'fftfreq': [
        "fft_fftfreq(int n, float d=1.0, *, Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
    ],
    'fftn': [
        "fft_fftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
    'fftshift': [
        "fft_fftshift(Tensor input, int[1]? dim=None)",
    ],
    'hfft': [
        "fft_hfft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'hfft2': [
        "fft_hfft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'hfftn': [
        "fft_hfftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
    'ifft': [
        "fft_ifft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'ifft2': [
        "fft_ifft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'ifftn': [
        "fft_ifftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
    'ifftshift': [
        "fft_ifftshift(Tensor input, int[1]? dim=None)",
    ],
    'ihfft': [
        "fft_ihfft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'ihfft2': [
        "fft_ihfft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'ihfftn': [
        "fft_ihfftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
    'irfft': [
        "fft_irfft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'irfft2': [
        "fft_irfft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'irfftn': [
        "fft_irfftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
    'rfft': [
        "fft_rfft(Tensor input, int? n=None, int dim=-1, str? norm=None, *, Tensor? out=None)",
    ],
    'rfft2': [
        "fft_rfft2(Tensor input, int[1]? s=None, int[1] dim=[-2,-1], str? norm=None, *, Tensor? out=None)",
    ],
    'rfftfreq': [
        "fft_rfftfreq(int n, float d=1.0, *, Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool? requires_grad=False)",
    ],
    'rfftn': [
        "fft_rfftn(Tensor input, int[1]? s=None, int[1]? dim=None, str? norm=None, *, Tensor? out=None)",
    ],
}

FUNCTIONAL = {
    # Losses and samplers PyTorch writes in Python around one binding: the
    # binding's types; `object` for what the Python code reads itself
    # (legacy size_average/reduce, reduction names, values it compares).
    'cross_entropy': [
        "cross_entropy_loss(Tensor input, Tensor target, Tensor? weight=None, object size_average=None, int ignore_index=-100, object reduce=None, object reduction=None, float label_smoothing=0.0)",
    ],
    'nll_loss': [
        "nll_loss_nd(Tensor input, Tensor target, Tensor? weight=None, object size_average=None, int ignore_index=-100, object reduce=None, object reduction=None)",
    ],
    'cosine_embedding_loss': [
        "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, object size_average=None, object reduce=None, object reduction=None)",
    ],
    'hinge_embedding_loss': [
        "hinge_embedding_loss(Tensor input, Tensor target, float margin=1.0, object size_average=None, object reduce=None, object reduction=None)",
    ],
    'poisson_nll_loss': [
        "poisson_nll_loss(Tensor input, Tensor target, bool log_input=True, bool full=False, object size_average=None, float eps=1e-08, object reduce=None, object reduction=None)",
    ],
    'triplet_margin_loss': [
        "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, object margin=1.0, float p=2, float eps=1e-06, bool swap=False, object size_average=None, object reduce=None, object reduction=None)",
    ],
    'soft_margin_loss': [
        "soft_margin_loss(Tensor input, Tensor target, object size_average=None, object reduce=None, object reduction=None)",
    ],
    'multilabel_margin_loss': [
        "multilabel_margin_loss(Tensor input, Tensor target, object size_average=None, object reduce=None, object reduction=None)",
    ],
    'kl_div': [
        "kl_div(Tensor input, Tensor target, object size_average=None, object reduce=None, object reduction=None, bool log_target=False)",
    ],
    'ctc_loss': [
        "ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, object reduction=None, bool zero_infinity=False)",
        "ctc_loss(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, object reduction=None, bool zero_infinity=False)",
    ],
    'grid_sample': [
        "grid_sampler(Tensor input, Tensor grid, object mode=None, object padding_mode=None, bool? align_corners=None)",
    ],
    'adaptive_max_pool1d': [
        "adaptive_max_pool1d(Tensor input, int[1] output_size, object return_indices=False)",
    ],
    'adaptive_max_pool1d_with_indices': [
        "adaptive_max_pool1d_with_indices(Tensor input, int[1] output_size, object return_indices=False)",
    ],
    'layer_norm': [
        "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05)",
    ],
    'max_pool1d': [
        "max_pool1d(Tensor input, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'max_pool1d_with_indices': [
        "max_pool1d_with_indices(Tensor input, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'max_pool2d': [
        "max_pool2d(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'max_pool2d_with_indices': [
        "max_pool2d_with_indices(Tensor input, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'max_pool3d': [
        "max_pool3d(Tensor input, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'max_pool3d_with_indices': [
        "max_pool3d_with_indices(Tensor input, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, object return_indices=False)",
    ],
    'rms_norm': [
        "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None)",
    ],
    'adaptive_avg_pool1d': [
        "adaptive_avg_pool1d(Tensor input, int[1] output_size, *, Tensor? out=None)",
    ],
    'avg_pool1d': [
        "avg_pool1d(Tensor input, int[1] kernel_size, int[1] stride=0, int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True, *, Tensor? out=None)",
    ],
    'avg_pool2d': [
        "avg_pool2d(Tensor input, int[2] kernel_size, int[2] stride=0, int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor? out=None)",
    ],
    'avg_pool3d': [
        "avg_pool3d(Tensor input, int[3] kernel_size, int[3] stride=0, int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor? out=None)",
    ],
    'bilinear': [
        "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)",
    ],
    'celu_': [
        "celu_(Tensor input, Scalar alpha=1.)",
    ],
    'channel_shuffle': [
        "channel_shuffle(Tensor input, SymInt groups, *, Tensor? out=None)",
    ],
    'conv3d': [
        "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, int[3] padding=0, int[3] dilation=0, SymInt groups=1)",
        "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, str padding=\"valid\", int[3] dilation=0, SymInt groups=1)",
    ],
    'conv_tbc': [
        "conv_tbc(Tensor input, Tensor weight, Tensor bias, int pad=0, *, Tensor? out=None)",
    ],
    'conv_transpose1d': [
        "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=0, int[1] padding=0, int[1] output_padding=0, SymInt groups=1, int[1] dilation=0)",
    ],
    'conv_transpose3d': [
        "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=0, int[3] padding=0, int[3] output_padding=0, SymInt groups=1, int[3] dilation=0)",
    ],
    'cosine_similarity': [
        "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)",
    ],
    'elu_': [
        "elu_(Tensor input, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)",
    ],
    'gelu': [
        "gelu(Tensor input, *, str approximate=\"none\", Tensor? out=None)",
    ],
    'hardshrink': [
        "hardshrink(Tensor input, Scalar lambd=0.5, *, Tensor? out=None)",
    ],
    'hardtanh_': [
        "hardtanh_(Tensor input, Scalar min_val=-1, Scalar max_val=1)",
    ],
    'leaky_relu_': [
        "leaky_relu_(Tensor input, Scalar negative_slope=0.01)",
    ],
    'linear': [
        "linear(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor? out=None)",
    ],
    'native_channel_shuffle': [
        "native_channel_shuffle(Tensor input, SymInt groups)",
    ],
    'one_hot': [
        "one_hot(Tensor input, int num_classes=-1)",
    ],
    'pad': [
        "pad(Tensor input, int[] pad, str mode=\"constant\", float? value=None)",
    ],
    'pairwise_distance': [
        "pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, bool keepdim=False)",
    ],
    'pdist': [
        "pdist(Tensor input, float p=2.)",
    ],
    'pixel_shuffle': [
        "pixel_shuffle(Tensor input, int upscale_factor, *, Tensor? out=None)",
    ],
    'pixel_unshuffle': [
        "pixel_unshuffle(Tensor input, int downscale_factor, *, Tensor? out=None)",
    ],
    'prelu': [
        "prelu(Tensor input, Tensor weight)",
    ],
    'relu_': [
        "relu_(Tensor input)",
    ],
    'rrelu_': [
        "rrelu_(Tensor input, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None)",
    ],
    'scaled_dot_product_attention': [
        "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False)",
    ],
    'selu_': [
        "selu_(Tensor input)",
    ],
    'softplus': [
        "softplus(Tensor input, Scalar beta=1, Scalar threshold=20, *, Tensor? out=None)",
    ],
    'softshrink': [
        "softshrink(Tensor input, Scalar lambd=0.5, *, Tensor? out=None)",
    ],
    'threshold_': [
        "threshold_(Tensor input, Scalar threshold, Scalar value)",
    ],
}
