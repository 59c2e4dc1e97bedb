{
  "targets": [
    {
      "target_name": "ringtorch",
      "sources": ["native/addon.cc", "<!@(ls -1 native/kernels/*.cc native/comm/*.cc native/pool/*.cc native/offload/*.cc 2>/dev/null)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-O2", "-O0", "-std=gnu++17"],
      "cflags": ["-O3", "-fno-math-errno", "-pthread"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-math-errno", "-pthread"],
      "ldflags": ["-pthread", "-lrt"]
    }
  ]
}
