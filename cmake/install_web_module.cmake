# Installs one Emscripten module where the JS API loads it (web/lib/wasm/, gitignored).
# Run by the WebAssembly build after linking (CMakeLists.txt, mha_web_module):
#
#   cmake -DFROM=<build dir> -DTO=<dir> -DSTEM=<file stem> -DFACTORY=<EXPORT_NAME> [-DTHREADS=ON] -P this
#
# Single-thread module:  TO/STEM.js (ES module) and TO/STEM.wasm.
# pthreads module:       TO/STEM.js (the classic script: what its worker threads load and what
#                        Node.js requires, so TO/package.json says commonjs), TO/STEM.mjs (the
#                        same as an ES module, for the page's own import), TO/STEM.worker.js and
#                        TO/STEM.wasm.
# The ES module is Emscripten's classic MODULARIZE output with `export default FACTORY;`
# appended: -sEXPORT_ES6 output uses __dirname and does not load in Node's ESM with
# Emscripten 3.1.6.
cmake_minimum_required(VERSION 3.16)

foreach(required FROM TO STEM FACTORY)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "install_web_module.cmake: -D${required}=... is missing")
  endif()
endforeach()

file(MAKE_DIRECTORY "${TO}")

# Each file is written beside its place and then renamed into it, so that a test that reads
# the folder meanwhile never sees half a file.
function(replace_with_copy from_name to_name)
  if(NOT EXISTS "${FROM}/${from_name}")
    message(FATAL_ERROR "the WebAssembly build did not produce ${FROM}/${from_name}")
  endif()
  configure_file("${FROM}/${from_name}" "${TO}/.${to_name}.tmp" COPYONLY)
  file(RENAME "${TO}/.${to_name}.tmp" "${TO}/${to_name}")
endfunction()

function(replace_with_text to_name text)
  file(WRITE "${TO}/.${to_name}.tmp" "${text}")
  file(RENAME "${TO}/.${to_name}.tmp" "${TO}/${to_name}")
endfunction()

file(READ "${FROM}/${STEM}.js" classic)
string(REGEX REPLACE "[ \t\r\n]+$" "" classic "${classic}")
set(es_module "${classic}\nexport default ${FACTORY};\n")

replace_with_copy(${STEM}.wasm ${STEM}.wasm)
if(THREADS)
  replace_with_copy(${STEM}.js ${STEM}.js)
  replace_with_copy(${STEM}.worker.js ${STEM}.worker.js)
  replace_with_text(${STEM}.mjs "${es_module}")
  replace_with_text(package.json "{ \"type\": \"commonjs\" }\n")
else()
  replace_with_text(${STEM}.js "${es_module}")
endif()
file(SIZE "${FROM}/${STEM}.wasm" wasm_bytes)
message(STATUS "installed ${STEM} in ${TO} (${wasm_bytes} bytes of wasm)")
