/**
 * Vite's output folder: index.html (the instance console), signup.html (the cluster's sign-up page),
 * unknown.html (for a browser at an address where no instance lives), operator.html and dex.html (the
 * operator's and dex administrators' consoles), assets/.
 */
export declare function consoleDist(): string;
