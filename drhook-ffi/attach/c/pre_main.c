/* The tools' start for a dlopen before main (in a library's constructor,
 * lifecycle/dlopen.rs). The library that carries the layer defines
 * drhook_attach_pre_main_tools (interpose!); the reference is hidden, so
 * it is bound when that library is linked, at no cost when it is loaded,
 * and NULL where nothing defines it (the layer's own tests). */
extern void drhook_attach_pre_main_tools(void) __attribute__((weak, visibility("hidden")));

void drhook_attach_c_pre_main(void)
{
    if (drhook_attach_pre_main_tools)
        drhook_attach_pre_main_tools();
}
