"""Never launches a kernel: cudalens profile must say so (exit 2) and report the exit status."""
print("nothing on the GPU here")
