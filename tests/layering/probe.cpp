// A probe of the layering (tests/layering/CMakeLists.txt): compiled with one layer's include path,
// it includes PROBE_HEADER, a header of another layer. An upward include must not compile.
#include PROBE_HEADER

int strata_layering_probe() { return 0; }
