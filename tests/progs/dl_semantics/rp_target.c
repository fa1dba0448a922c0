/* librp_target.so: lives only in a folder the caller's RUNPATH ($ORIGIN/sub) names. */
const char* rp_target_name(void) { return "target"; }
