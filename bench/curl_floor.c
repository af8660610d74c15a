/* curl_floor.c — the resident-size floor of any process that talks HTTP with
 * libcurl, for bench/agent.sh: it loads libcurl.so.4 the way the agent does
 * (dlopen, RTLD_NOW), calls curl_global_init as the agent does, and then waits
 * to be killed, so the bench can read its VmRSS next to the agent's. */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    CURLcode (*global_init)(long) = lib ? (CURLcode(*)(long))dlsym(lib, "curl_global_init") : NULL;
    if (!global_init || global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "curl_floor: cannot load or initialise libcurl.so.4\n");
        return 1;
    }
    for (;;) pause();
}
