// The Node face of the console: where its built assets are, for the gateway that serves them.

/** Vite's output folder: index.html (the instance console), signup.html (the cluster's sign-up page), assets/. */
exports.consoleDist = `${__dirname}/dist`;
