/** Vite's output folder: index.html (the instance console), signup.html (the cluster's sign-up page), assets/. */
export declare function consoleDist(): string;
