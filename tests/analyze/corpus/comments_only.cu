// nothing here
/* not even a kernel */
