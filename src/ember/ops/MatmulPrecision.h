#pragma once
// torch.set_float32_matmul_precision: how float32 matrix products may trade
// precision for speed on devices that can ('highest': full float32; 'high':
// TF32 tensor cores; 'medium': as 'high' where no faster bfloat16 path is
// used). torch.backends.cuda.matmul.allow_tf32 reads and writes the same state.
#include <string>

#include "ember/core/Macros.h"

namespace ember {

enum class MatmulPrecision : int { Highest = 0, High = 1, Medium = 2 };

EMBER_API MatmulPrecision float32_matmul_precision();
EMBER_API void set_float32_matmul_precision(MatmulPrecision p);
// "highest" / "high" / "medium"; false for another name (then nothing changes).
EMBER_API bool set_float32_matmul_precision(const std::string& name);
EMBER_API const char* float32_matmul_precision_name();

}  // namespace ember
