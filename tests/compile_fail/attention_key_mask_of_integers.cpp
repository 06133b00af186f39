// transformers' attention_mask (int64, 1 read, 0 not) given as the key mask
// as it is: a key mask holds bool; compare it first.
#include <dimtensor/dimtensor.hpp>
// EXPECT: key_mask_not_bool<dimtensor::call::scaled_dot_product_attention, long( int)?>
// EXPECT: a key mask holds bool, true where a key is read
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);

int main() {
  auto const q = dt::randn<float>(Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<float>(Batch(2), KVPairs(5), Feat(4));
  auto const attention_mask = dt::ones<std::int64_t>(Batch(2), KVPairs(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const m = dt::masking_of<KVPairs>().key_mask(attention_mask);  // the mistake
#else
  auto const m = dt::masking_of<KVPairs>().key_mask(dt::ne(attention_mask, std::int64_t{0}));  // the fix
#endif
  auto const out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, k, m);
  (void)out;
}
