const char* which_lib(void) { return "B"; }
int next_b_marker = 1; /* referenced by the program so the linker keeps libnext_b.so */
